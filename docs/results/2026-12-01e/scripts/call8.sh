#!/usr/bin/env bash
# Session 6, call 8: GPU tests and examples of the stride-8 gate build (prebuilt), and its codec rows against the landed build (x/codec-cur, stride 4).
set -uo pipefail
export LD_LIBRARY_PATH="$PWD/prebuilt/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p "$OUT/logs"
timeout 150 prebuilt/test/gpu_tests > "$OUT/logs/gpu_tests.log" 2>&1; echo "gpu_tests rc=$? $(tail -2 "$OUT/logs/gpu_tests.log" | tr '\n' ' ')"
cp prebuilt/benchmarks/ncclz-codec-bench /tmp/codec-s8
cp prebuilt/x/codec-cur /tmp/codec-cur
one() {  # variant input coders round
  timeout 60 "/tmp/codec-$1" --data data --only $2 --bounds 1e-3,1e-4 --coders $3 --runs 5 --size-mb 64 --seed 7 >"$OUT/logs/codec-$1-$2-$4.log" 2>&1
  echo "$1 $2 rc=$? $(grep -E '^(OK|FAILED):' "$OUT/logs/codec-$1-$2-$4.log")" >> "$OUT/status.txt"
  grep -E "concat|^smooth |^noise " "$OUT/logs/codec-$1-$2-$4.log" | sed 's/concat(13 fields, tiled)x3.4/concat/' | awk -v w="$1" '{print w, $0}' >> "$OUT/table.txt"
}
for round in 1 2 3; do
  for v in cur s8; do
    for inp in noise concat smooth; do one $v $inp fixed_length,huffman,zero_run,adaptive $round; done
  done
done
timeout 150 env OUT="$OUT/logs" scripts/run_test_list.sh prebuilt 'example' > "$OUT/logs/examples.log" 2>&1; echo "examples rc=$?"; tail -6 "$OUT/logs/examples.log"
cd "$OUT" && tar czf logs.tgz logs && rm -rf logs
sort status.txt | uniq -c
