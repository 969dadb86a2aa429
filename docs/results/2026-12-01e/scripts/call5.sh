#!/usr/bin/env bash
set -uo pipefail
export LD_LIBRARY_PATH="$PWD/xrun/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p "$OUT"
xrun/smsp_bench > "$OUT/smsp.txt" 2>&1
cuobjdump -sass -fun _ZN5ncclz5sm9007kernels13decode_kernelINS_5CodecINS_9QuantizerINS_8RelBoundEEENS_12EntropyCoderINS_7HuffmanEEEEEfNS1_10value_sinkIS6_fEEEEvPKSt4bytemT1_mPNS1_13decode_reportE xrun/codec-v2 > /tmp/dec.sass 2>&1
gzip -c /tmp/dec.sass > "$OUT/dec-v2.sass.gz"
ncu --clock-control none --section WarpStateStats --section SourceCounters -k regex:decode_kernel --launch-count 1 -o /tmp/dn xrun/codec-v2 --data data --only noise --bounds 1e-3 --coders huffman --runs 1 --size-mb 64 --seed 7 > /tmp/dn_run.txt 2>&1
ncu -i /tmp/dn.ncu-rep --page source --csv --print-source sass > /tmp/dn.csv 2>&1
python3 xrun/parse_rows.py /tmp/dn.csv | gzip > "$OUT/parse-rows.csv.gz"
cat "$OUT/smsp.txt"
