#!/usr/bin/env bash
# Session 17, call 3 (a6343f3's encode = codec-k): where bf16 Adaptive's encode kernels spill
# (nvdisasm line info of their local loads and stores), and ncu of smooth_bf16 at REL 1e-4
# (every tile huffman) for Huffman and Adaptive: instructions, stalls, per-line source counters.
set -uo pipefail
A=xr15/a3
mkdir -p $A/x "$OUT/p" && tar xJf xr15/a2/bins.tar.xz -C $A/x codec-k
B=$A/x/codec-k
start=$SECONDS
( cd $A/x && cuobjdump -xelf all codec-k >/dev/null 2>&1; ls *.cubin > cubins.txt 2>&1 )
for c in $A/x/*.cubin; do nvdisasm -g -c "$c"; done 2>/dev/null | python3 $A/spills.py Adaptive > "$OUT/spills-adaptive.txt"
for c in $A/x/*.cubin; do nvdisasm -g -c "$c"; done 2>/dev/null | python3 $A/spills.py Huffman > "$OUT/spills-huffman.txt"
echo "spills done at $((SECONDS - start)) s" >> "$OUT/status.txt"
NCU="ncu --clock-control none --kernel-name-base demangled --section SpeedOfLight --section Occupancy --section WarpStateStats --section SourceCounters --section LaunchStats --section InstructionStats --section MemoryWorkloadAnalysis_Tables"
for c in huffman adaptive; do
  $NCU -k "regex:encode_kernel<.*__nv_bfloat16" --launch-skip 2 --launch-count 1 -o "$OUT/p/$c" $B --only smooth --bounds 1e-4 --coders $c --runs 1 --size-mb 64 --seed 7 --dtype bf16 >"$OUT/p/${c}_run.txt" 2>&1
  ncu -i "$OUT/p/$c.ncu-rep" --page details >"$OUT/p/${c}_details.txt" 2>&1
  ncu -i "$OUT/p/$c.ncu-rep" --page source --csv --print-source cuda,sass >"$OUT/p/${c}_source.csv" 2>&1
  rm -f "$OUT/p/$c.ncu-rep"; gzip -f "$OUT/p/${c}_source.csv"
done
echo "ncu done at $((SECONDS - start)) s" >> "$OUT/status.txt"
cd "$OUT"; cat status.txt
for c in huffman adaptive; do
  echo "=== $c"; grep -m1 -E "encode_kernel" p/${c}_details.txt | cut -c1-200
  grep -E "^ +(Duration|Registers Per Thread|Achieved Occupancy|Theoretical Occupancy|Warp Cycles Per Issued Instruction|Executed Instructions |Local Memory Spilling|Block Limit Registers|Block Limit Shared Mem)" p/${c}_details.txt | head -12
done
head -30 spills-adaptive.txt; head -12 spills-huffman.txt
