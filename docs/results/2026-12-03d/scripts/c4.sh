#!/usr/bin/env bash
# Session 19, call 4: ncu SourceCounters of HEAD's encoder (h = the z2 build, same machine code) on the two rows over 10%: smooth_bf16 1e-4 RelBound (Adaptive vs Huffman) and smooth_f16 1e-4 AbsBound (Adaptive vs FixedLength).
set -uo pipefail
A=xr16
tar xJf $A/bins8.tar.xz -C $A
mkdir -p "$OUT/p"
start=$SECONDS
B=$A/codec-h
NCU="ncu --clock-control none --kernel-name-base demangled --section SourceCounters --section LaunchStats --section Occupancy"
prof() {  # name coder dtype regex
  timeout 90 $NCU -k "regex:$4" --launch-skip 1 --launch-count 1 -o "$A/$1" $B --only smooth --bounds 1e-4 --coders $2 --runs 1 --size-mb 64 --seed 7 --dtype $3 >"$OUT/p/$1_run.txt" 2>&1
  ncu -i "$A/$1.ncu-rep" --page source --csv --print-source sass > "$A/$1.csv" 2>&1
  ncu -i "$A/$1.ncu-rep" --page details > "$OUT/p/$1_details.txt" 2>&1
  echo "prof $1 at $((SECONDS - start)) s $(grep -c '' $A/$1.csv) rows" >> "$OUT/status.txt"
}
prof bf16_huffman huffman bf16 "encode_kernel<.*RelBound.*Huffman.*>, __nv_bfloat16, "
prof bf16_adaptive adaptive bf16 "encode_kernel<.*RelBound.*Adaptive.*>, __nv_bfloat16, "
prof f16abs_fixed fixed_length f16 "encode_kernel<.*AbsBound.*FixedLength.*>, __half, "
prof f16abs_adaptive adaptive f16 "encode_kernel<.*AbsBound.*Adaptive.*>, __half, "
tar cJf "$OUT/raw.tar.xz" -C $A bf16_huffman.csv bf16_adaptive.csv f16abs_fixed.csv f16abs_adaptive.csv 2>/dev/null
cd p && tar czf ../p.tgz . && cd .. && rm -rf p
cat status.txt
