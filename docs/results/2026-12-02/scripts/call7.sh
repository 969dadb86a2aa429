#!/usr/bin/env bash
# Session 7, call 7: the landed build's allreduce rows again (Adaptive 1 / 2 / 4 parts, FixedLength 2 parts), two rounds, prebuilt c674bb3.
set -uo pipefail
export LD_LIBRARY_PATH="$PWD/prebuilt/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p "$OUT/logs"
row() { # NAME ARGS...
  local name=$1; shift
  timeout 60 scripts/emulated_cluster.sh -n 4 --timeout 60 -- "$PWD/prebuilt/benchmarks/ncclz-perf" --data data \
    -C allreduce -b 256M -e 256M --rel 1e-3 "$@" > "$OUT/logs/$name.log" 2>&1
  echo "$name $(grep -E '^ +268435456' "$OUT/logs/$name.log" | awk '{print "nccl_us", $7, "ncclz_us", $12, "speedup", $17, "ratio", $18}')" >> "$OUT/rows.txt"
}
for round in 1 2; do
  row adaptive-1part-$round --coder adaptive
  row adaptive-2parts-$round --coder adaptive --chunk 128M
  row adaptive-4parts-$round --coder adaptive --chunk 64M
  row fixed-2parts-$round --coder fixed_length --chunk 128M
done
cd "$OUT" && tar czf logs.tgz logs && rm -rf logs
cat rows.txt
