#!/usr/bin/env bash
# Session 12, call A: the GPU tests of HEAD (3165a14, prebuilt), then the codec bench of base
# (HEAD), h55 (zero_run measured only where 55% of the codes or deltas are zero, not 50%) and hskip
# (the sample's near-half verdict skips zero_run instead of counting every element): smooth as f32,
# bf16, f16 and noise as f32 (huffman, adaptive, fixed_length), three rounds; then ncu source
# counters of the bf16 Huffman and Adaptive encoders on smooth at REL 1e-4 (base), and hskip's.
#   run(command="bash docs/results/2026-12-02f/scripts/callA.sh", carry=["xr12/callA"])
set -uo pipefail
A=xr12/callA
export LD_LIBRARY_PATH="$PWD/$A/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p "$OUT/logs" "$OUT/ncu"
start=$SECONDS
timeout 150 $A/gpu_tests > "$OUT/logs/gpu_tests.log" 2>&1
echo "gpu_tests rc=$? $(tail -3 "$OUT/logs/gpu_tests.log" | tr '\n' ' ') at $((SECONDS - start)) s" >> "$OUT/status.txt"
tail -40 "$OUT/logs/gpu_tests.log" > "$OUT/gpu_tests-tail.txt"
one() {  # variant input coders round [extra args]
  timeout 100 "$A/codec-$1" --only $2 --bounds 1e-3,1e-4 --coders $3 --runs 5 --size-mb 64 --seed 7 ${5:-} >"$OUT/logs/codec-$1-$2-$4.log" 2>&1
  echo "$1 $2 rc=$? $(grep -E '^(OK|FAILED):' "$OUT/logs/codec-$1-$2-$4.log")" >> "$OUT/status.txt"
  grep -E "^(concat|smooth|noise)" "$OUT/logs/codec-$1-$2-$4.log" | awk -v w="$1" -v r="$4" '{print w, r, $0}' >> "$OUT/table.txt"
}
for round in 1 2 3; do
  for v in base h55 hskip; do
    one $v smooth fixed_length,huffman,adaptive $round "--dtype f32,bf16,f16"
    one $v noise fixed_length,huffman,adaptive $round "--dtype f32"
  done
done
echo "bench done at $((SECONDS - start)) s" >> "$OUT/status.txt"
NCU="ncu --clock-control none --section WarpStateStats --section InstructionStats --section LaunchStats --section Occupancy --section SourceCounters --section SpeedOfLight"
for run in base:huffman base:adaptive hskip:adaptive; do
  v=${run%%:*}; coder=${run##*:}
  timeout 45 $NCU -k regex:encode_kernel --launch-skip 4 --launch-count 1 -o "/tmp/$v-$coder" $A/codec-$v --only smooth \
    --dtype bf16 --bounds 1e-4 --coders $coder --runs 1 --size-mb 64 --seed 7 > "$OUT/ncu/run-$v-$coder.txt" 2>&1
  echo "ncu $v $coder rc=$? at $((SECONDS - start)) s" >> "$OUT/status.txt"
  ncu -i "/tmp/$v-$coder.ncu-rep" --page details > "$OUT/ncu/ncu-$v-$coder.txt" 2>&1
  ncu -i "/tmp/$v-$coder.ncu-rep" --page source --csv --print-source sass > "$OUT/ncu/sass-$v-$coder.csv" 2>&1
done
gzip "$OUT"/ncu/sass-*.csv
cd "$OUT/logs" && tar czf ../logs.tgz . && cd .. && rm -rf logs
grep -E "Duration|Executed Instructions  |Warp Cycles Per Issued" "$OUT"/ncu/ncu-*.txt
sort status.txt | uniq -c | sort -rn | head -12
