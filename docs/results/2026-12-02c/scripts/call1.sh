#!/usr/bin/env bash
# Session 9, call 1: the range-pass microbench (rangebench: grid/unroll/order variants, the Huffman
# encode after a forward or reverse range pass or a flushed L2), then the codec bench of base (hy,
# the landed kernels), st (the staged codes without a local array) and strp (st + reverse range
# pass + the encode as a programmatic dependent launch): smooth and noise as f32, bf16, f16 with
# fixed_length, huffman, adaptive, three rounds.
set -uo pipefail
export LD_LIBRARY_PATH="$PWD/xr9/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p "$OUT/logs"
start=$SECONDS
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv > "$OUT/gpu.txt" 2>&1
timeout 60 xr9/rangebench > "$OUT/rangebench.txt" 2>&1; echo "rangebench rc=$? at $((SECONDS - start)) s" >> "$OUT/status.txt"
one() {  # variant input coders round [extra args]
  timeout 100 "xr9/codec-$1" --data data --only $2 --bounds 1e-3,1e-4 --coders $3 --runs 5 --size-mb 64 --seed 7 ${5:-} >"$OUT/logs/codec-$1-$2-$4.log" 2>&1
  echo "$1 $2 rc=$? $(grep -E '^(OK|FAILED):' "$OUT/logs/codec-$1-$2-$4.log")" >> "$OUT/status.txt"
  grep -E "^(concat|smooth|noise)" "$OUT/logs/codec-$1-$2-$4.log" | sed 's/concat(13 fields, tiled)x3.4/concat/' | awk -v w="$1" -v r="$4" '{print w, r, $0}' >> "$OUT/table.txt"
}
for round in 1 2 3; do
  for v in ${VARIANTS:-base st strp}; do
    for inp in smooth noise; do one $v $inp fixed_length,huffman,adaptive $round "--dtype f32,bf16,f16"; done
  done
done
for v in ${VARIANTS:-base st strp}; do one $v concat huffman,adaptive 1; done
echo "bench done at $((SECONDS - start)) s" >> "$OUT/status.txt"
cd "$OUT" && tar czf logs-bench.tgz logs/codec-* && rm -f logs/codec-*
cat rangebench.txt
sort status.txt | uniq -c | sort -rn | head -8
