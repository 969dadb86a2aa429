#!/usr/bin/env bash
# Session 22, call 1: 4-rank allreduce, 256 MiB f32, REL 1e-3, Adaptive: base (c90ac94) and the
# gather build (x), with and without NCCLZ_X_GATHER, alternating; NCCL_P2P_NET_CHUNKSIZE rows.
set -uo pipefail
t0=$SECONDS
tar xJf xr/bins.tar.xz && tar xJf xr/data.tar.xz
export LD_LIBRARY_PATH=$PWD/bins/lib
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
row() { # NAME BIN ENV... -- ARGS
  local name=$1 bin=$2; shift 2
  local envs=(); while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  env "${envs[@]}" timeout 70 scripts/emulated_cluster.sh -n 4 --timeout 65 -- "$PWD/bins/$bin" --data data -C allreduce \
    -b 256M -e 256M --rel 1e-3 --coder adaptive --json "$OUT/$name.jsonl" "$@" > "$OUT/$name.log" 2>&1
  echo "$name rc=$? $(grep -E '^ +[0-9]+ +[0-9]+ ' "$OUT/$name.log" | awk -F'|' '{print $2 "|" $3 "|" $4}') at $((SECONDS - t0)) s"
}
for r in 1 2 3; do
  row base4-$r perf-base X=0 -- --chunk 64M
  row x4-$r perf-x X=0 -- --chunk 64M
  row g4-$r perf-x NCCLZ_X_GATHER=1 -- --chunk 64M
  row g2-$r perf-x NCCLZ_X_GATHER=1 -- --chunk 128M
  [ $r = 1 ] && row g4p-$r perf-x NCCLZ_X_GATHER=1 -- --chunk 64M --phases
  [ $r = 1 ] && row base4p-$r perf-base X=0 -- --chunk 64M --phases
  [ $r = 2 ] && row c4-$r perf-base NCCL_P2P_NET_CHUNKSIZE=524288 -- --chunk 64M
  [ $r = 2 ] && row gc4-$r perf-x NCCL_P2P_NET_CHUNKSIZE=524288 NCCLZ_X_GATHER=1 -- --chunk 64M
done
echo "=== total $((SECONDS - t0)) s"
