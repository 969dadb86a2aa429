#!/usr/bin/env bash
# Session 9, call 2: the GPU tests of the working tree (uz: st + one sum of warp-packed zeros),
# ncu source counters of the f16 encoders (Adaptive against the FixedLength it keeps, smooth and
# noise at 1e-4), then the codec bench of base (the landed kernels) and uz: smooth and noise as
# f32, bf16, f16 (fixed_length, huffman, adaptive), three rounds; the tiled fields once.
set -uo pipefail
export LD_LIBRARY_PATH="$PWD/xr9/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p "$OUT/logs"
start=$SECONDS
timeout 240 xr9/gpu_tests > "$OUT/logs/gpu_tests.log" 2>&1
echo "gpu_tests rc=$? $(tail -3 "$OUT/logs/gpu_tests.log" | tr '\n' ' ') at $((SECONDS - start)) s" >> "$OUT/status.txt"
tail -40 "$OUT/logs/gpu_tests.log" > "$OUT/gpu_tests-tail.txt"
NCU="ncu --clock-control none --section WarpStateStats --section InstructionStats --section LaunchStats --section Occupancy --section SourceCounters"
prof() {  # coder input bound
  local n=$1-$2-$3
  timeout 120 $NCU -k regex:encode_kernel --launch-skip 4 --launch-count 1 -o "/tmp/$n" xr9/codec-uz --data data --only $2 --dtype f16 \
    --bounds $3 --coders $1 --runs 1 --size-mb 64 --seed 7 > "$OUT/logs/run-$n.txt" 2>&1
  echo "ncu $n rc=$? at $((SECONDS - start)) s" >> "$OUT/status.txt"
  ncu -i "/tmp/$n.ncu-rep" --page details > "$OUT/logs/ncu-$n.txt" 2>&1
  ncu -i "/tmp/$n.ncu-rep" --page source --csv --print-source sass > "$OUT/logs/sass-$n.csv" 2>&1
}
prof adaptive smooth 1e-4; prof fixed_length smooth 1e-4; prof adaptive noise 1e-4
one() {  # variant input coders round [extra args]
  timeout 100 "xr9/codec-$1" --data data --only $2 --bounds 1e-3,1e-4 --coders $3 --runs 5 --size-mb 64 --seed 7 ${5:-} >"$OUT/logs/codec-$1-$2-$4.log" 2>&1
  echo "$1 $2 rc=$? $(grep -E '^(OK|FAILED):' "$OUT/logs/codec-$1-$2-$4.log")" >> "$OUT/status.txt"
  grep -E "^(concat|smooth|noise)" "$OUT/logs/codec-$1-$2-$4.log" | sed 's/concat(13 fields, tiled)x3.4/concat/' | awk -v w="$1" -v r="$4" '{print w, r, $0}' >> "$OUT/table.txt"
}
for round in 1 2 3; do
  for v in ${VARIANTS:-base uz}; do
    for inp in smooth noise; do one $v $inp fixed_length,huffman,adaptive $round "--dtype f32,bf16,f16"; done
  done
done
for v in ${VARIANTS:-base uz}; do one $v concat fixed_length,zero_run,adaptive 1; done
echo "bench done at $((SECONDS - start)) s" >> "$OUT/status.txt"
cd "$OUT/logs" && tar czf ../logs.tgz . && cd .. && rm -rf logs
sort status.txt | uniq -c | sort -rn | head -12
