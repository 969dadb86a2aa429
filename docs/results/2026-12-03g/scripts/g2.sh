#!/usr/bin/env bash
# Session 22, call 2: the gathered owner chunks (prebuilt here, carried packed). Cluster tests on
# 2-4 ranks; the 4-part allreduce against c90ac94 (bins/perf-base), alternating; then the lean
# run's perf rows (GPU tests, codec bench and gradients skipped: no kernel changed).
set -uo pipefail
t0=$SECONDS
tar xJf xr/prebuilt.tar.xz && tar xJf xr/data.tar.xz && tar xJf xr/bins.tar.xz
cat prebuilt/commit
OUT0=$OUT
mkdir -p "$OUT/tests"
OUT=$OUT0 timeout 330 scripts/run_test_list.sh prebuilt 'collectives_|lossless_' | tee "$OUT/tests.txt"
echo "tests at $((SECONDS - t0)) s"
row() { # NAME DIR/BIN ARGS
  local name=$1 bin=$2; shift 2
  LD_LIBRARY_PATH=$PWD/prebuilt/lib timeout 70 scripts/emulated_cluster.sh -n 4 --timeout 65 -- "$PWD/$bin" --data data -C allreduce \
    -b 256M -e 256M --rel 1e-3 --coder adaptive --json "$OUT/ab/$name.jsonl" "$@" > "$OUT/ab/$name.log" 2>&1
  echo "$name rc=$? $(grep -E '^ +[0-9]+ +[0-9]+ ' "$OUT/ab/$name.log" | awk -F'|' '{print $2 "|" $3 "|" $4}') at $((SECONDS - t0)) s" | tee -a "$OUT/ab-table.txt"
}
mkdir -p "$OUT/ab"
for r in 1 2 3; do
  row base4-$r bins/perf-base --chunk 64M
  row new4-$r prebuilt/benchmarks/ncclz-perf --chunk 64M
done
row new4p prebuilt/benchmarks/ncclz-perf --chunk 64M --phases
tar czf "$OUT/ab.tgz" -C "$OUT" ab && rm -rf "$OUT/ab"
SKIP_STEPS="gpu_tests cluster_tests codec_bench make_gradients lossless_bench" LIMIT_S=$((560 - (SECONDS - t0))) \
  bash scripts/device_run_lean.sh > "$OUT/lean-stdout.txt" 2>&1
echo "lean rc=$? at $((SECONDS - t0)) s"
(cd "$OUT/tests" && tar czf ../tests.tgz . ) && rm -rf "$OUT/tests"
grep -E "^=== " "$OUT/lean-stdout.txt" | tail -20
grep -E "^-- |^ +[0-9]+ +[0-9]+ " "$OUT/lean-stdout.txt" | awk -F'|' '{print $1 "|" $3 "|" $4}' | cut -c1-20,60-200 | head -40
cat "$OUT/ab-table.txt"
