#!/usr/bin/env bash
# Session 10, call 5 (review): the GPU tests of cp, then the codec bench of landed (b230610) and cp
# (the encoder's staged-planes pointer spelled once for every type instead of per branch; it
# changes the .text of the FixedLength RelBound encoders for f32 (value and code sources), f16 and
# bf16, and of no other encode kernel): smooth and noise as f32, bf16, f16 with fixed_length,
# three rounds.
set -uo pipefail
export LD_LIBRARY_PATH="$PWD/xr10/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p "$OUT/logs"
start=$SECONDS
timeout 150 xr10/gpu_tests-cp > "$OUT/logs/gpu_tests.log" 2>&1
echo "gpu_tests rc=$? $(tail -3 "$OUT/logs/gpu_tests.log" | tr '\n' ' ') at $((SECONDS - start)) s" >> "$OUT/status.txt"
tail -40 "$OUT/logs/gpu_tests.log" > "$OUT/gpu_tests-tail.txt"
one() {  # variant input coders round [extra args]
  timeout 60 "xr10/codec-$1" --data data --only $2 --bounds 1e-3,1e-4 --coders $3 --runs 5 --size-mb 64 --seed 7 ${5:-} >"$OUT/logs/codec-$1-$2-$4.log" 2>&1
  echo "$1 $2 rc=$? $(grep -E '^(OK|FAILED):' "$OUT/logs/codec-$1-$2-$4.log")" >> "$OUT/status.txt"
  grep -E "^(concat|smooth|noise)" "$OUT/logs/codec-$1-$2-$4.log" | sed 's/concat(13 fields, tiled)x3.4/concat/' | awk -v w="$1" -v r="$4" '{print w, r, $0}' >> "$OUT/table.txt"
}
for round in ${ROUNDS:-1 2 3}; do
  for v in landed cp; do
    for inp in smooth noise; do one $v $inp fixed_length $round "--dtype f32,bf16,f16"; done
  done
done
echo "bench done at $((SECONDS - start)) s" >> "$OUT/status.txt"
cd "$OUT/logs" && tar czf ../logs.tgz . && cd .. && rm -rf logs
sort status.txt | uniq -c | sort -rn | head -8
