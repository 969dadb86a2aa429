#!/usr/bin/env bash
# Session 21, call 3: the lean device run of 560af6a (prebuilt here, carried packed), then more
# rounds of the codec bench's Adaptive and FixedLength rows while the call has time left (the GPU tests
# of this code ran in call 2 as s1: skipped here).
set -uo pipefail
t0=$SECONDS
tar xJf xr16/prebuilt21.tar.xz && tar xJf xr11/pack/data.tar.xz
SKIP_STEPS="gpu_tests" LIMIT_S=420 bash scripts/device_run_lean.sh > "$OUT/lean-stdout.txt" 2>&1
echo "lean rc=$? at $((SECONDS - t0)) s" > "$OUT/extra-status.txt"
round=0
while [ $((SECONDS - t0)) -lt ${EXTRA_UNTIL:-470} ]; do
  round=$((round + 1))
  for in in smooth; do
    timeout 40 prebuilt/benchmarks/ncclz-codec-bench --data data --only $in --bounds 1e-4 --coders fixed_length,adaptive --runs 7 --size-mb 64 --seed 7 --dtype f32,f16,bf16 > "$OUT/extra.log" 2>&1
    grep -E "^smooth" "$OUT/extra.log" | awk -v r=$round '{print "final", r, $0}' >> "$OUT/extra-table.txt"
  done
done
echo "extra rounds $round at $((SECONDS - t0)) s" >> "$OUT/extra-status.txt"
tail -25 "$OUT/lean-stdout.txt"; cat "$OUT/extra-status.txt"
