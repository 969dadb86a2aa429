#!/usr/bin/env bash
# Session 7, call 2: GPU tests of 1ffd6ed (halved sub-blocks, lane parse); codec A/B base (0782b51) / pair (a1724b7: halves two at a time in the all-warps parse, Huffman encode at 4 blocks an SM), three rounds.
set -uo pipefail
export LD_LIBRARY_PATH="$PWD/xr7/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p "$OUT/logs"
start=$SECONDS
timeout 200 xr7/gpu_tests_1ffd > "$OUT/logs/gpu_tests_1ffd.log" 2>&1
echo "gpu_tests_1ffd rc=$? $(tail -3 "$OUT/logs/gpu_tests_1ffd.log" | tr '\n' ' ') at $((SECONDS - start)) s" >> "$OUT/status.txt"
one() {  # variant input coders round
  timeout 100 "xr7/codec-$1" --data data --only $2 --bounds 1e-3,1e-4 --coders $3 --runs 5 --size-mb 64 --seed 7 >"$OUT/logs/codec-$1-$2-$4.log" 2>&1
  echo "$1 $2 rc=$? $(grep -E '^(OK|FAILED):' "$OUT/logs/codec-$1-$2-$4.log")" >> "$OUT/status.txt"
  grep -E "concat|^smooth |^noise " "$OUT/logs/codec-$1-$2-$4.log" | sed 's/concat(13 fields, tiled)x3.4/concat/' | awk -v w="$1" '{print w, $0}' >> "$OUT/table.txt"
}
for round in 1 2 3; do
  for v in ${VARIANTS:-base pair}; do
    for inp in noise concat smooth; do one $v $inp fixed_length,huffman,zero_run,adaptive $round; done
  done
done
echo "bench done at $((SECONDS - start)) s" >> "$OUT/status.txt"
cd "$OUT" && tar czf logs.tgz logs && rm -rf logs
cat status.txt | sort | uniq -c | sort -rn | head -20
