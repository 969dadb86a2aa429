#!/usr/bin/env bash
# Session 6, call 4: v2 (plain-atomic histogram, gate without codebook term, window parse + prefetch, range fix) A/B; ncu of v2.
set -uo pipefail
export LD_LIBRARY_PATH="$PWD/xrun/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p "$OUT/logs"
one() {  # variant input coders round
  timeout 100 "xrun/codec-$1" --data data --only $2 --bounds 1e-3,1e-4 --coders $3 --runs 5 --size-mb 64 --seed 7 >"$OUT/logs/codec-$1-$2-$4.log" 2>&1
  echo "$1 $2 rc=$? $(grep -E '^(OK|FAILED):' "$OUT/logs/codec-$1-$2-$4.log")" >> "$OUT/status.txt"
  grep -E "concat|^smooth |^noise " "$OUT/logs/codec-$1-$2-$4.log" | sed 's/concat(13 fields, tiled)x3.4/concat/' | awk -v w="$1" '{print w, $0}' >> "$OUT/table.txt"
}
for round in 1 2; do
  for v in ${VARIANTS:-head nospread v2 v2b4}; do
    for inp in noise concat smooth; do one $v $inp fixed_length,huffman,zero_run,adaptive $round; done
  done
done
NCU="ncu --clock-control none --section WarpStateStats --section SourceCounters --section LaunchStats --section Occupancy"
prof() { # NAME BUILD REGEX SKIP ONLY BOUND CODER
  timeout 120 $NCU -k "regex:$3" --launch-skip $4 --launch-count 1 -o "/tmp/$1" "xrun/codec-$2" --data data --only "$5" \
    --bounds "$6" --coders $7 --runs 1 --size-mb 64 --seed 7 >"/tmp/$1_run.txt" 2>&1
  ncu -i "/tmp/$1.ncu-rep" --page source --csv --print-source sass >"/tmp/$1_sass.csv" 2>&1
  ncu -i "/tmp/$1.ncu-rep" --page details >"/tmp/$1_details.txt" 2>&1
  python3 xrun/sass_regions.py "/tmp/$1_sass.csv" > "$OUT/logs/regions-$1.txt" 2>&1
  grep -E "Duration|Registers Per|Block Limit|Achieved Occ|Theoretical Occ|Executed Ipc|Issue Slots" "/tmp/$1_details.txt" >> "$OUT/logs/regions-$1.txt"
}
prof dec-noise3 v2 decode_kernel 0 noise 1e-3 huffman
prof enc-ad-smooth4 v2 encode_kernel 0 smooth 1e-4 adaptive
prof enc-fl-smooth4 v2 encode_kernel 0 smooth 1e-4 fixed_length
cd "$OUT" && tar czf logs.tgz logs && rm -rf logs
