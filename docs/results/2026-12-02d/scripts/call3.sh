#!/usr/bin/env bash
# Session 10, call 3: ncu source counters of the landed build's f32 FixedLength and Adaptive
# encoders on the smooth input at REL 1e-4 (Adaptive keeps fixed_length in every tile there and
# runs 11% behind): where the selection's time goes, for the next session.
set -uo pipefail
export LD_LIBRARY_PATH="$PWD/xr10/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p "$OUT"
NCU="ncu --clock-control none --section WarpStateStats --section InstructionStats --section LaunchStats --section Occupancy --section SourceCounters"
for coder in fixed_length adaptive; do
  timeout 120 $NCU -k regex:encode_kernel --launch-skip 4 --launch-count 1 -o "/tmp/$coder" xr10/codec-landed --data data --only smooth \
    --dtype f32 --bounds 1e-4 --coders $coder --runs 1 --size-mb 64 --seed 7 > "$OUT/run-$coder.txt" 2>&1
  echo "ncu $coder rc=$?"
  ncu -i "/tmp/$coder.ncu-rep" --page details > "$OUT/ncu-$coder.txt" 2>&1
  ncu -i "/tmp/$coder.ncu-rep" --page source --csv --print-source sass > "$OUT/sass-$coder.csv" 2>&1
done
gzip "$OUT"/sass-*.csv
grep -E "Duration|Executed Instructions  |Warp Cycles Per Issued" "$OUT"/ncu-*.txt
