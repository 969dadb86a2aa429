#!/usr/bin/env bash
# Session 12, call B: the GPU tests of the runs rule (zero_run measured near half zero only where
# the zeros come in runs of 3 or more), then the codec bench of base (HEAD 3165a14) and runs: smooth
# and noise as f32, bf16, f16 (fixed_length, huffman, adaptive), three rounds, the tiled fields once;
# then ncu source counters of runs' encoders: bf16 Huffman and Adaptive on smooth at REL 1e-4,
# f32 FixedLength and Adaptive on smooth at REL 1e-4 (Adaptive keeps fixed_length there).
#   run(command="bash docs/results/2026-12-02f/scripts/callB.sh", carry=["xr12/callB", "xr11/pack"])
set -uo pipefail
B=xr12/callB
tar xJf xr11/pack/data.tar.xz  # the fields
export LD_LIBRARY_PATH="$PWD/$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p "$OUT/logs" "$OUT/ncu"
start=$SECONDS
timeout 150 $B/gpu_tests > "$OUT/logs/gpu_tests.log" 2>&1
echo "gpu_tests rc=$? $(tail -3 "$OUT/logs/gpu_tests.log" | tr '\n' ' ') at $((SECONDS - start)) s" >> "$OUT/status.txt"
tail -40 "$OUT/logs/gpu_tests.log" > "$OUT/gpu_tests-tail.txt"
one() {  # variant input coders round [extra args]
  timeout 100 "$B/codec-$1" --data data --only $2 --bounds 1e-3,1e-4 --coders $3 --runs 5 --size-mb 64 --seed 7 ${5:-} >"$OUT/logs/codec-$1-$2-$4.log" 2>&1
  echo "$1 $2 rc=$? $(grep -E '^(OK|FAILED):' "$OUT/logs/codec-$1-$2-$4.log")" >> "$OUT/status.txt"
  grep -E "^(concat|smooth|noise)" "$OUT/logs/codec-$1-$2-$4.log" | sed 's/concat(13 fields, tiled)x3.4/concat/' | awk -v w="$1" -v r="$4" '{print w, r, $0}' >> "$OUT/table.txt"
}
for round in 1 2 3; do
  for v in base runs; do
    for inp in smooth noise; do one $v $inp fixed_length,huffman,adaptive $round "--dtype f32,bf16,f16"; done
  done
done
for v in base runs; do one $v concat fixed_length,huffman,zero_run,adaptive 1 "--dtype f32,bf16,f16"; done
echo "bench done at $((SECONDS - start)) s" >> "$OUT/status.txt"
NCU="ncu --clock-control none --section WarpStateStats --section InstructionStats --section LaunchStats --section Occupancy --section SourceCounters --section SpeedOfLight"
for run in bf16:huffman bf16:adaptive f32:fixed_length f32:adaptive; do
  t=${run%%:*}; coder=${run##*:}
  timeout 45 $NCU -k regex:encode_kernel --launch-skip 4 --launch-count 1 -o "/tmp/$t-$coder" $B/codec-runs --only smooth \
    --dtype $t --bounds 1e-4 --coders $coder --runs 1 --size-mb 64 --seed 7 > "$OUT/logs/ncu-run-$t-$coder.txt" 2>&1
  echo "ncu $t $coder rc=$? at $((SECONDS - start)) s" >> "$OUT/status.txt"
  ncu -i "/tmp/$t-$coder.ncu-rep" --page details > "$OUT/ncu/ncu-$t-$coder.txt" 2>&1
  ncu -i "/tmp/$t-$coder.ncu-rep" --page source --csv --print-source sass > "$OUT/ncu/sass-$t-$coder.csv" 2>&1
done
cd "$OUT/ncu" && tar czf ../sass.tgz sass-*.csv && rm sass-*.csv && cd "$OUT"
grep -E "Duration|Executed Instructions  |Warp Cycles Per Issued" "$OUT"/ncu/ncu-*.txt
cd "$OUT/ncu" && tar czf ../ncu.tgz . && cd "$OUT" && rm -rf ncu
cd "$OUT/logs" && tar czf ../logs.tgz . && cd .. && rm -rf logs
sort status.txt | uniq -c | sort -rn | head -12
