#!/usr/bin/env bash
# Session 7, call 6: codec A/B pair (a1724b7) / l1 (the encode kernel's carveout fitted to the shared memory of the blocks its registers allow, the rest left to L1), three rounds.
set -uo pipefail
export LD_LIBRARY_PATH="$PWD/xr7/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p "$OUT/logs"
start=$SECONDS
one() {  # variant input coders round
  timeout 100 "xr7/codec-$1" --data data --only $2 --bounds 1e-3,1e-4 --coders $3 --runs 5 --size-mb 64 --seed 7 >"$OUT/logs/codec-$1-$2-$4.log" 2>&1
  echo "$1 $2 rc=$? $(grep -E '^(OK|FAILED):' "$OUT/logs/codec-$1-$2-$4.log")" >> "$OUT/status.txt"
  grep -E "concat|^smooth |^noise " "$OUT/logs/codec-$1-$2-$4.log" | sed 's/concat(13 fields, tiled)x3.4/concat/' | awk -v w="$1" '{print w, $0}' >> "$OUT/table.txt"
}
for round in 1 2 3; do
  for v in ${VARIANTS:-pair l1}; do
    for inp in noise concat smooth; do one $v $inp fixed_length,huffman,zero_run,adaptive $round; done
  done
done
echo "bench done at $((SECONDS - start)) s" >> "$OUT/status.txt"
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
echo "ncu done at $((SECONDS - start)) s" >> "$OUT/status.txt"
cd "$OUT" && tar czf logs.tgz logs && rm -rf logs
cat status.txt | sort | uniq -c | sort -rn | head -20
