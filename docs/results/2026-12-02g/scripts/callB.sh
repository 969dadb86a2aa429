#!/usr/bin/env bash
# Session 13, call B: GPU tests of pk2; the reset/PDL stream prototypes (stream_bench2); the codec
# bench of base, pk1 (block place parked in shared memory), pk2 (pk1 + the entropy plans parked),
# ad3 (Adaptive at 3 blocks an SM, no spills), cb1 (Huffman's escape-class counts from prefix
# sums), cb (cb1 + the merge's weights loaded a pop ahead): smooth and noise as f32/bf16/f16,
# three rounds; the tiled fields once for base, pk2, cb1.
#   run(command="bash xr12/callB/callB.sh", carry=["xr12/callB", "xr11/pack"])
set -uo pipefail
B=xr12/callB
tar xJf xr11/pack/data.tar.xz
export LD_LIBRARY_PATH="$PWD/$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p "$OUT/logs"
start=$SECONDS
timeout 150 $B/gpu_tests-pk2 > "$OUT/logs/gpu_tests-pk2.log" 2>&1
echo "gpu_tests pk2 rc=$? $(tail -3 "$OUT/logs/gpu_tests-pk2.log" | tr '\n' ' ') at $((SECONDS - start)) s" >> "$OUT/status.txt"
tail -30 "$OUT/logs/gpu_tests-pk2.log" > "$OUT/gpu_tests-tail.txt"
timeout 120 $B/stream_bench2 > "$OUT/stream2.txt" 2>&1
echo "stream2 rc=$? at $((SECONDS - start)) s" >> "$OUT/status.txt"
one() {  # variant input coders round [extra args]
  timeout 100 "$B/codec-$1" --data data --only $2 --bounds 1e-3,1e-4 --coders $3 --runs 5 --size-mb 64 --seed 7 ${5:-} >"$OUT/logs/codec-$1-$2-$4.log" 2>&1
  echo "$1 $2 rc=$? $(grep -E '^(OK|FAILED):' "$OUT/logs/codec-$1-$2-$4.log")" >> "$OUT/status.txt"
  grep -E "^(concat|smooth|noise)" "$OUT/logs/codec-$1-$2-$4.log" | sed 's/concat(13 fields, tiled)x3.4/concat/' | awk -v w="$1" -v r="$4" '{print w, r, $0}' >> "$OUT/table.txt"
}
for round in 1 2 3; do
  for v in base pk1 pk2 ad3 cb1 cb; do
    for inp in smooth noise; do one $v $inp fixed_length,huffman,adaptive $round "--dtype f32,bf16,f16"; done
  done
done
for v in base pk2 cb1; do one $v concat fixed_length,huffman,zero_run,adaptive 1 "--dtype f32,bf16,f16"; done
echo "bench done at $((SECONDS - start)) s" >> "$OUT/status.txt"
cd "$OUT/logs" && tar czf ../logs.tgz . && cd .. && rm -rf logs
cat "$OUT/stream2.txt"
sort status.txt | uniq -c | sort -rn | head -12
