#!/usr/bin/env bash
# Session 7, call 1: codec A/B: base (0782b51) / half (halved sub-blocks of wide huffman tiles) / hb4 (half + Huffman encode at 4 blocks an SM); ncu of half.
set -uo pipefail
export LD_LIBRARY_PATH="$PWD/xr7/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p "$OUT/logs"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > "$OUT/logs/gpu.txt" 2>&1
one() {  # variant input coders round
  timeout 100 "xr7/codec-$1" --data data --only $2 --bounds 1e-3,1e-4 --coders $3 --runs 5 --size-mb 64 --seed 7 >"$OUT/logs/codec-$1-$2-$4.log" 2>&1
  echo "$1 $2 rc=$? $(grep -E '^(OK|FAILED):' "$OUT/logs/codec-$1-$2-$4.log")" >> "$OUT/status.txt"
  grep -E "concat|^smooth |^noise " "$OUT/logs/codec-$1-$2-$4.log" | sed 's/concat(13 fields, tiled)x3.4/concat/' | awk -v w="$1" '{print w, $0}' >> "$OUT/table.txt"
}
start=$SECONDS
for round in 1 2; do
  for v in ${VARIANTS:-base half hb4}; do
    for inp in noise concat smooth; do one $v $inp fixed_length,huffman,adaptive $round; done
  done
  echo "round $round done at $((SECONDS - start)) s" >> "$OUT/status.txt"
done
NCU="ncu --clock-control none --section WarpStateStats --section SourceCounters --section LaunchStats --section Occupancy"
prof() { # NAME BUILD REGEX SKIP ONLY BOUND CODER
  timeout 100 $NCU -k "regex:$3" --launch-skip $4 --launch-count 1 -o "/tmp/$1" "xr7/codec-$2" --data data --only "$5" \
    --bounds "$6" --coders $7 --runs 1 --size-mb 64 --seed 7 >"/tmp/$1_run.txt" 2>&1
  ncu -i "/tmp/$1.ncu-rep" --page source --csv --print-source sass >"/tmp/$1_sass.csv" 2>&1
  ncu -i "/tmp/$1.ncu-rep" --page details >"/tmp/$1_details.txt" 2>&1
  python3 xr7/sass_regions.py "/tmp/$1_sass.csv" > "$OUT/logs/regions-$1.txt" 2>&1
  grep -E "Duration|Registers Per|Block Limit|Achieved Occ|Theoretical Occ|Executed Ipc|Issue Slots" "/tmp/$1_details.txt" >> "$OUT/logs/regions-$1.txt"
  cp "/tmp/$1_sass.csv" "$OUT/logs/"
}
prof dec-noise4 half decode_kernel 0 noise 1e-4 huffman
prof enc-noise3 half encode_kernel 0 noise 1e-3 huffman
prof enc-ad-smooth4 half encode_kernel 0 smooth 1e-4 adaptive
prof enc-fl-smooth4 half encode_kernel 0 smooth 1e-4 fixed_length
echo "ncu done at $((SECONDS - start)) s" >> "$OUT/status.txt"
cd "$OUT" && tar czf logs.tgz logs && rm -rf logs
cat status.txt | sort | uniq -c | sort -rn | head -20
