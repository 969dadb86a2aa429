#!/usr/bin/env bash
# Session 13, call C: GPU tests of espk and g1 (espk + Adaptive's gate sample counted per warp before
# the first barrier); the codec bench of base (0525736), cb1 (Huffman's escape-class
# counts from prefix sums), es (cb1 + the estimate's classes above the first summed per warp at
# once), esp (es + the encoder launched as a programmatic dependent), espk (esp + the block's place
# parked in shared memory by coders with entropy modes), g1: smooth and noise as f32/bf16/f16, three
# rounds; the tiled fields once for base and espk.
#   run(command="bash xr12/callC/callC.sh", carry=["xr12/callC", "xr11/pack"])
set -uo pipefail
C=xr12/callC
tar xJf xr11/pack/data.tar.xz
export LD_LIBRARY_PATH="$PWD/$C/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p "$OUT/logs"
start=$SECONDS
for t in espk g1; do
  timeout 150 $C/gpu_tests-$t > "$OUT/logs/gpu_tests-$t.log" 2>&1
  echo "gpu_tests $t rc=$? $(tail -3 "$OUT/logs/gpu_tests-$t.log" | tr '\n' ' ') at $((SECONDS - start)) s" >> "$OUT/status.txt"
  tail -12 "$OUT/logs/gpu_tests-$t.log" >> "$OUT/gpu_tests-tail.txt"
done
one() {  # variant input coders round [extra args]
  timeout 100 "$C/codec-$1" --data data --only $2 --bounds 1e-3,1e-4 --coders $3 --runs 5 --size-mb 64 --seed 7 ${5:-} >"$OUT/logs/codec-$1-$2-$4.log" 2>&1
  echo "$1 $2 rc=$? $(grep -E '^(OK|FAILED):' "$OUT/logs/codec-$1-$2-$4.log")" >> "$OUT/status.txt"
  grep -E "^(concat|smooth|noise)" "$OUT/logs/codec-$1-$2-$4.log" | sed 's/concat(13 fields, tiled)x3.4/concat/' | awk -v w="$1" -v r="$4" '{print w, r, $0}' >> "$OUT/table.txt"
}
for round in 1 2 3; do
  for v in base es esp espk g1; do
    for inp in smooth noise; do one $v $inp fixed_length,huffman,adaptive $round "--dtype f32,bf16,f16"; done
  done
done
for v in base espk g1; do one $v concat fixed_length,huffman,zero_run,adaptive 1 "--dtype f32,bf16,f16"; done
echo "bench done at $((SECONDS - start)) s" >> "$OUT/status.txt"
cd "$OUT/logs" && tar czf ../logs.tgz . && cd .. && rm -rf logs
sort status.txt | uniq -c | sort -rn | head -12
