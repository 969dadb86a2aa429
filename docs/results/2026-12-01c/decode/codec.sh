#!/usr/bin/env bash
# One-off device call of this session (not committed): GPU tests, the codec bench, ncu of the
# huffman decoder on noise.
set -uo pipefail
export LD_LIBRARY_PATH="$PWD/xrun/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p "$OUT/logs"
timeout 150 xrun/gpu_tests >"$OUT/logs/gpu_tests.log" 2>&1; echo "gpu_tests rc=$?"; tail -3 "$OUT/logs/gpu_tests.log"
timeout 120 xrun/ncclz-codec-bench --data data --bounds 1e-3,1e-4 --coders fixed_length,huffman,zero_run,adaptive --runs 5 --size-mb 64 \
  --json "$OUT/logs/codec.json" >"$OUT/logs/codec_bench.log" 2>&1; echo "codec rc=$?"
grep -E "concat|^smooth |^noise " "$OUT/logs/codec_bench.log" | grep -v raw | cut -c1-140
NCU="ncu --clock-control none --section SpeedOfLight --section Occupancy --section WarpStateStats --section SourceCounters --section LaunchStats --section MemoryWorkloadAnalysis"
timeout 200 $NCU -k "regex:decode_kernel" --launch-skip 0 --launch-count 1 -o "$OUT/dec" xrun/ncclz-codec-bench --only noise --bounds 1e-3 \
  --coders huffman --runs 1 --size-mb 64 >"$OUT/logs/dec_run.txt" 2>&1; echo "ncu rc=$?"
ncu -i "$OUT/dec.ncu-rep" --page details >"$OUT/logs/dec_details.txt" 2>&1
ncu -i "$OUT/dec.ncu-rep" --page source --csv --print-source cuda,sass >"$OUT/logs/dec_source.csv" 2>&1
grep -E "Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Block Limit|Warp Cycles Per Issued|Issued Ipc|Memory Throughput|Compute \(SM\)|Static Shared|L2 Hit|L1/TEX Hit" "$OUT/logs/dec_details.txt" | head -30
grep -E "^ *(Stall|stall)|OPT|Est\. Speedup" "$OUT/logs/dec_details.txt" | head -12
cd "$OUT" && tar czf logs.tgz logs dec.ncu-rep && rm -rf logs dec.ncu-rep
