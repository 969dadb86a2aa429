#!/usr/bin/env bash
# Session 13, call A: GPU tests of w0 (the gate's bins summed by warp 0 alone); the stream split of
# a RelBound compress (memset, range, encode: xr10/stream_bench.cu); the codec bench of base
# (0525736) and w0, smooth and noise as f32/bf16/f16, three rounds, the tiled fields once; ncu
# source counters: base Huffman f32 noise 1e-4, w0 Adaptive and FixedLength f32 smooth 1e-4.
#   run(command="bash xr12/callA/callA.sh", carry=["xr12/callA", "xr11/pack"]) (the script copied into xr12/callA)
set -uo pipefail
A=xr12/callA
tar xJf xr11/pack/data.tar.xz
export LD_LIBRARY_PATH="$PWD/$A/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p "$OUT/logs" "$OUT/ncu"
start=$SECONDS
timeout 150 $A/gpu_tests-w0 > "$OUT/logs/gpu_tests-w0.log" 2>&1
echo "gpu_tests w0 rc=$? $(tail -3 "$OUT/logs/gpu_tests-w0.log" | tr '\n' ' ') at $((SECONDS - start)) s" >> "$OUT/status.txt"
tail -30 "$OUT/logs/gpu_tests-w0.log" > "$OUT/gpu_tests-tail.txt"
timeout 120 $A/stream_bench > "$OUT/stream.txt" 2>&1
echo "stream rc=$? at $((SECONDS - start)) s" >> "$OUT/status.txt"
one() {  # variant input coders round [extra args]
  timeout 100 "$A/codec-$1" --data data --only $2 --bounds 1e-3,1e-4 --coders $3 --runs 5 --size-mb 64 --seed 7 ${5:-} >"$OUT/logs/codec-$1-$2-$4.log" 2>&1
  echo "$1 $2 rc=$? $(grep -E '^(OK|FAILED):' "$OUT/logs/codec-$1-$2-$4.log")" >> "$OUT/status.txt"
  grep -E "^(concat|smooth|noise)" "$OUT/logs/codec-$1-$2-$4.log" | sed 's/concat(13 fields, tiled)x3.4/concat/' | awk -v w="$1" -v r="$4" '{print w, r, $0}' >> "$OUT/table.txt"
}
for round in 1 2 3; do
  for v in base w0; do
    for inp in smooth noise; do one $v $inp fixed_length,huffman,adaptive $round "--dtype f32,bf16,f16"; done
  done
done
for v in base w0; do one $v concat fixed_length,huffman,zero_run,adaptive 1 "--dtype f32,bf16,f16"; done
echo "bench done at $((SECONDS - start)) s" >> "$OUT/status.txt"
NCU="ncu --clock-control none --section WarpStateStats --section InstructionStats --section LaunchStats --section Occupancy --section SourceCounters --section SpeedOfLight"
for run in base:noise:huffman w0:smooth:adaptive w0:smooth:fixed_length; do
  IFS=: read -r v inp coder <<< "$run"
  timeout 60 $NCU -k regex:encode_kernel --launch-skip 4 --launch-count 1 -o "/tmp/$v-$inp-$coder" $A/codec-$v --only $inp \
    --dtype f32 --bounds 1e-4 --coders $coder --runs 1 --size-mb 64 --seed 7 > "$OUT/logs/ncu-run-$v-$inp-$coder.txt" 2>&1
  echo "ncu $v $inp $coder rc=$? at $((SECONDS - start)) s" >> "$OUT/status.txt"
  ncu -i "/tmp/$v-$inp-$coder.ncu-rep" --page details > "$OUT/ncu/ncu-$v-$inp-$coder.txt" 2>&1
  ncu -i "/tmp/$v-$inp-$coder.ncu-rep" --page source --csv --print-source sass > "$OUT/ncu/sass-$v-$inp-$coder.csv" 2>&1
done
grep -E "Duration|Executed Instructions  |Warp Cycles Per Issued" "$OUT"/ncu/ncu-*.txt
cd "$OUT/ncu" && tar czf ../ncu.tgz . && cd "$OUT" && rm -rf ncu
cd "$OUT/logs" && tar czf ../logs.tgz . && cd .. && rm -rf logs
cat "$OUT/stream.txt"
sort status.txt | uniq -c | sort -rn | head -12
