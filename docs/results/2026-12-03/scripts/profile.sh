#!/usr/bin/env bash
# Session 16: where Adaptive's encode spends more than FixedLength's on smooth f32 at REL 1e-4
# (every tile fixed_length; zero_run sample says skip, huffman's gate fails). 29e8457's codec bench.
set -uo pipefail
tar xJf xr14/final/prebuilt.tar.xz
export LD_LIBRARY_PATH="$PWD/prebuilt/lib"
B=prebuilt/benchmarks/ncclz-codec-bench
mkdir -p "$OUT/p"
NCU="ncu --clock-control none --section SpeedOfLight --section Occupancy --section WarpStateStats --section SourceCounters --section LaunchStats --section InstructionStats --section MemoryWorkloadAnalysis_Tables"
for c in fixed_length adaptive huffman; do
  $NCU -k "regex:encode_kernel" --launch-skip 4 --launch-count 1 -o "$OUT/p/$c" $B --only smooth --bounds 1e-4 --coders $c --runs 1 --size-mb 64 --seed 7 >"$OUT/p/${c}_run.txt" 2>&1
  ncu -i "$OUT/p/$c.ncu-rep" --page details >"$OUT/p/${c}_details.txt" 2>&1
  ncu -i "$OUT/p/$c.ncu-rep" --page source --csv --print-source cuda,sass >"$OUT/p/${c}_source.csv" 2>&1
  ncu -i "$OUT/p/$c.ncu-rep" --page raw --csv >"$OUT/p/${c}_raw.csv" 2>&1
  rm -f "$OUT/p/$c.ncu-rep"
  gzip -f "$OUT/p/${c}_source.csv" "$OUT/p/${c}_raw.csv"
done
cd "$OUT/p" && tar czf ../prof.tgz . && cd .. 
for c in fixed_length adaptive huffman; do
  echo "=== $c"; grep -m1 -E "encode_kernel" p/${c}_details.txt | cut -c1-160
  grep -E "^ +(Duration|Registers Per Thread|Achieved Occupancy|Theoretical Occupancy|Warp Cycles Per Issued Instruction|Issued Ipc Active|Executed Instructions |Block Limit Registers|Block Limit Shared Mem|Local Memory Spilling|Dynamic Shared Memory Per Block|Static Shared Memory Per Block)" p/${c}_details.txt | head -16
done
rm -rf p
