#!/usr/bin/env bash
set -uo pipefail
out=${OUT:-/tmp/out}; mkdir -p $out
bash scripts/device_targets.sh benchmarks/ncclz-codec-bench true || exit 1
B=build-device/benchmarks/ncclz-codec-bench
NCU="ncu --clock-control none --section SpeedOfLight --section Occupancy --section WarpStateStats --section SourceCounters --section LaunchStats"
$NCU -k regex:encode_kernel --launch-skip 4 --launch-count 1 -o $out/enc $B --bounds 1e-3 --coders huffman --runs 1 --size-mb 64 > $out/enc_run.txt 2>&1
$NCU -k regex:decode_kernel --launch-skip 0 --launch-count 1 -o $out/dec $B --bounds 1e-3 --coders huffman --runs 1 --size-mb 64 > $out/dec_run.txt 2>&1
for k in enc dec; do
  ncu -i $out/$k.ncu-rep --page details > $out/${k}_details.txt 2>&1
  ncu -i $out/$k.ncu-rep --page source --csv --print-source cuda > $out/${k}_source.csv 2>&1
done
cd $out && tar czf /tmp/prof.tgz . && rm -rf ./* && mv /tmp/prof.tgz .
tar xzf prof.tgz -O ./enc_details.txt | grep -E "Duration|Registers|Achieved Occupancy|Theoretical Occupancy|Block Limit|Stall|stall|Warp Cycles|Issued|Memory Throughput|Compute" | head -40
tar xzf prof.tgz -O ./dec_details.txt | grep -E "Duration|Registers|Achieved Occupancy|Theoretical Occupancy|Block Limit|Stall|stall|Warp Cycles|Issued|Memory Throughput|Compute" | head -40
