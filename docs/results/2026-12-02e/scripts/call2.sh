#!/usr/bin/env bash
# Session 11, call 2: the lean run of the landed build (7ababc3, prebuilt here), then ncu source
# counters of its bf16 Huffman and Adaptive encoders on the smooth input at REL 1e-4 (Adaptive
# takes huffman in every tile there and runs 19% behind).
#   run(command="bash docs/results/2026-12-02e/scripts/call2.sh", carry=["xr11/pack", "prebuilt"])
set -uo pipefail
tar xJf xr11/pack/data.tar.xz  # the fields, packed to fit the carry
LIMIT_S=490 OUT="$OUT/final" bash scripts/device_run_lean.sh | tail -40
export LD_LIBRARY_PATH="$PWD/prebuilt/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p "$OUT/ncu"
NCU="ncu --clock-control none --section WarpStateStats --section InstructionStats --section LaunchStats --section Occupancy --section SourceCounters --section SpeedOfLight"
for coder in huffman adaptive; do
  timeout 45 $NCU -k regex:encode_kernel --launch-skip 4 --launch-count 1 -o "/tmp/$coder" prebuilt/benchmarks/ncclz-codec-bench --data data --only smooth \
    --dtype bf16 --bounds 1e-4 --coders $coder --runs 1 --size-mb 64 --seed 7 > "$OUT/ncu/run-$coder.txt" 2>&1
  echo "ncu $coder rc=$?"
  ncu -i "/tmp/$coder.ncu-rep" --page details > "$OUT/ncu/ncu-$coder.txt" 2>&1
  ncu -i "/tmp/$coder.ncu-rep" --page source --csv --print-source sass > "$OUT/ncu/sass-$coder.csv" 2>&1
done
gzip "$OUT"/ncu/sass-*.csv
grep -E "Duration|Executed Instructions  |Warp Cycles Per Issued" "$OUT"/ncu/ncu-*.txt
