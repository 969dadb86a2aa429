#!/usr/bin/env bash
# The fourth session's one-off device calls (not committed as tools): codec bench builds
# xrun/codec-$v (build_bench.sh), two rounds alternating over VARIANTS; then, with PROFILE set,
# ncu of the build $PROFILE (per-instruction samples; sass_regions.py sums them between barriers).
#   ab-warps-table.txt    VARIANTS="head w4 w1"
#   ab-final-table.txt    VARIANTS="head w1 fin" PROFILE=fin (ncu-decode-noise-1e-4.txt)
#   ab-encoder-table.txt  VARIANTS="head fin enc" PROFILE=enc
#   ab-encoder2-table.txt VARIANTS="enc enc2" PROFILE=enc2 (ncu-sass-regions.txt)
set -uo pipefail
export LD_LIBRARY_PATH="$PWD/xrun/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p "$OUT/logs"
for round in 1 2; do
  for v in $VARIANTS; do
    timeout 100 "xrun/codec-$v" --data data --bounds 1e-3,1e-4 --coders huffman,adaptive --runs 5 --size-mb 64 \
      >"$OUT/logs/codec-$v-$round.log" 2>&1
    echo "$v round $round rc=$? $(grep -E '^(OK|FAILED):' "$OUT/logs/codec-$v-$round.log")" >> "$OUT/table.txt"
    grep -E "concat|^smooth |^noise " "$OUT/logs/codec-$v-$round.log" | grep -v raw | awk -v w="$v" '{print w, $0}' | cut -c1-125 >> "$OUT/table.txt"
  done
done
cat "$OUT/table.txt"
[ -n "${PROFILE:-}" ] || exit 0
NCU="ncu --clock-control none --section WarpStateStats --section SourceCounters --section LaunchStats"
prof() { # NAME REGEX SKIP ONLY BOUND
  timeout 150 $NCU -k "regex:$2" --launch-skip $3 --launch-count 1 -o "/tmp/$1" "xrun/codec-$PROFILE" --data data --only "$4" \
    --bounds "$5" --coders huffman --runs 1 --size-mb 64 >"/tmp/$1_run.txt" 2>&1
  ncu -i "/tmp/$1.ncu-rep" --page source --csv --print-source sass >"/tmp/$1_sass.csv" 2>&1
  ncu -i "/tmp/$1.ncu-rep" --page details >"/tmp/$1_details.txt" 2>&1
}
prof enc-concat encode_kernel 4 concat 1e-3
prof dec-noise3 decode_kernel 0 noise 1e-3
prof dec-noise4 decode_kernel 0 noise 1e-4
cd /tmp && tar czf "$OUT/sass.tgz" ./*_sass.csv ./*_details.txt
