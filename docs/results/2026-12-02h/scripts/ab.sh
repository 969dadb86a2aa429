#!/usr/bin/env bash
# Session 14 call 5: GPU tests of the build to land; the 4-part Adaptive allreduce of 5068e37
# (base) and of the build (new), alternating, with NCCL's defaults and with
# NCCL_P2P_NET_CHUNKSIZE=1M.
set -uo pipefail
tar xJf xr11/pack/data.tar.xz
export LD_LIBRARY_PATH="$PWD/prebuilt/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
out=$OUT/ab; mkdir -p "$out"
timeout 150 prebuilt/test/gpu_tests >"$out/gpu_tests.log" 2>&1; echo "gpu_tests rc=$?"; tail -3 "$out/gpu_tests.log"
row() { # NAME BINARY ENV ARGS
  local name=$1 bin=$2 envs=$3; shift 3
  # shellcheck disable=SC2086
  timeout 60 env $envs scripts/emulated_cluster.sh -n 4 --timeout 60 -- "$PWD/$bin" --data data -C allreduce -b 256M -e 256M \
    --rel 1e-3 --coder adaptive --json "$out/$name.jsonl" "$@" >"$out/$name.log" 2>&1
  echo "$name $(grep -E '^ +[0-9]+ +[0-9]+ ' "$out/$name.log" | awk '{print "nccl", $7, "ncclz", $12, "x", $17}') $(grep -c 'ncclz 0 OK' "$out/$name.log")"
}
B=prebuilt/benchmarks/ncclz-perf-base N=prebuilt/benchmarks/ncclz-perf C=NCCL_P2P_NET_CHUNKSIZE=1048576
for r in 1 2 3; do
  row base4-$r $B "" --chunk 64M; row new4-$r $N "" --chunk 64M
done
for r in 1 2; do
  row base4c-$r $B $C --chunk 64M; row new4c-$r $N $C --chunk 64M
done
row base1 $B "" ; row new1 $N ""
row base2 $B "" --chunk 128M; row new2 $N "" --chunk 128M
