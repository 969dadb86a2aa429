#!/usr/bin/env bash
# Session 18, call 3: GPU tests of z (y + count_all's zero counts in arrays of their own, one
# barrier fewer, and read as int4; the give-up's code bits in u32); the codec bench of y against z
# (smooth and noise, every dtype, 1e-3 and 1e-4, rounds alternating); then ncu of y's encode
# kernels, Huffman and Adaptive on noise f32 at 1e-4 (every tile huffman) and FixedLength and
# Adaptive on smooth f32 at 1e-4 (every tile fixed_length), SASS source counters joined with
# nvdisasm's line info: where Adaptive executes more than the coder it picks.
set -uo pipefail
A=xr16
V="y z"
tar xJf xr11/pack/data.tar.xz && tar xJf $A/prebuilt.tar.xz && tar xJf $A/bins2.tar.xz -C $A
export LD_LIBRARY_PATH="$PWD/prebuilt/lib"
cp prebuilt/benchmarks/ncclz-codec-bench $A/codec-y
mkdir -p "$OUT/logs" "$OUT/p"
start=$SECONDS
timeout 150 $A/gpu_tests-z > "$OUT/logs/gpu_tests-z.log" 2>&1
echo "gpu_tests z rc=$? $(tail -3 "$OUT/logs/gpu_tests-z.log" | tr '\n' ' ') at $((SECONDS - start)) s" >> "$OUT/status.txt"
one() {  # variant input coders round bounds dtypes
  timeout 60 "$A/codec-$1" --data data --only $2 --bounds $5 --coders $3 --runs 7 --size-mb 64 --seed 7 --dtype $6 >"$OUT/logs/codec-$1-$2-$4.log" 2>&1
  echo "$1 $2 $4 rc=$? $(grep -E '^(OK|FAILED):' "$OUT/logs/codec-$1-$2-$4.log") at $((SECONDS - start)) s" >> "$OUT/status.txt"
  grep -E "^(smooth|noise)" "$OUT/logs/codec-$1-$2-$4.log" | awk -v w="$1" -v r="$4" '{print w, r, $0}' >> "$OUT/table.txt"
}
for round in 1 2 3 4 5; do
  [ $((SECONDS - start)) -gt 200 ] && break
  for v in $V; do
    one $v smooth fixed_length,zero_run,huffman,adaptive $round 1e-3,1e-4 f32,f16,bf16
    one $v noise huffman,fixed_length,adaptive $round 1e-3,1e-4 f32,f16,bf16
  done
done
echo "bench done at $((SECONDS - start)) s" >> "$OUT/status.txt"
B=$A/codec-y
( mkdir -p $A/cub && cd $A/cub && cuobjdump -xelf all ../codec-y >/dev/null 2>&1 )
for c in $A/cub/*.cubin; do nvdisasm -g -c "$c"; done > $A/dis.txt 2>/dev/null
NCU="ncu --clock-control none --kernel-name-base demangled --section SourceCounters --section LaunchStats --section Occupancy"
prof() {  # name input coder regex
  timeout 60 $NCU -k "regex:$4" --launch-skip 1 --launch-count 1 -o "$A/$1" $B --only $2 --bounds 1e-4 --coders $3 --runs 1 --size-mb 64 --seed 7 --dtype f32 >"$OUT/p/$1_run.txt" 2>&1
  ncu -i "$A/$1.ncu-rep" --page source --csv --print-source sass > "$A/$1.csv" 2>&1
  ncu -i "$A/$1.ncu-rep" --page details > "$OUT/p/$1_details.txt" 2>&1
  head -5 "$A/$1.csv" | cut -c1-600 > "$OUT/p/$1_head.txt"
  echo "prof $1 at $((SECONDS - start)) s" >> "$OUT/status.txt"
}
prof huffman noise huffman "encode_kernel<.*RelBound.*Huffman.*>, float, "
prof adaptive_noise noise adaptive "encode_kernel<.*RelBound.*Adaptive.*>, float, "
prof fixed smooth fixed_length "encode_kernel<.*RelBound.*FixedLength.*>, float, "
prof adaptive_smooth smooth adaptive "encode_kernel<.*RelBound.*Adaptive.*>, float, "
python3 $A/by_line.py $A/dis.txt $A/huffman.csv $A/adaptive_noise.csv "RelBound,Huffman,float" "RelBound,Adaptive,float" > "$OUT/p/noise-by-line.txt" 2>&1
python3 $A/by_line.py $A/dis.txt $A/fixed.csv $A/adaptive_smooth.csv "RelBound,FixedLength,float" "RelBound,Adaptive,float" > "$OUT/p/smooth-by-line.txt" 2>&1
tar cJf "$OUT/p/raw.tar.xz" -C $A huffman.csv adaptive_noise.csv fixed.csv adaptive_smooth.csv 2>/dev/null
grep -E "Adaptive|Huffman|FixedLength" $A/dis.txt | grep -E "^\s*\.section\s+\.text" | head -0
echo "ncu done at $((SECONDS - start)) s" >> "$OUT/status.txt"
cd "$OUT/logs" && tar czf ../logs.tgz . && cd .. && rm -rf logs
cd p && tar czf ../p.tgz . && cd .. && rm -rf p
cat status.txt | grep -v "rc=0 OK"
python3 - table.txt $V <<'PY'
import sys, statistics as st, collections as c
vs = sys.argv[2:]
comp = c.defaultdict(list); tiles = {}; ratio = {}
for l in open(sys.argv[1]):
    f = l.split(); k = (f[0], f[2], f[3], f[5]); comp[k].append(float(f[7])); tiles[k] = f[-1]; ratio[k] = f[6]
keys = sorted({k[1:] for k in comp})
for k in keys:
    if k[1] not in ("adaptive",) and "1e-04" not in k[2]: continue
    m = [st.median(comp[(v,) + k]) if (v,) + k in comp else 0 for v in vs]
    same = all(ratio.get((v,) + k) == ratio.get((vs[0],) + k) and tiles.get((v,) + k) == tiles.get((vs[0],) + k) for v in vs)
    print("%-30s" % " ".join(k) + " ".join("%s %6.1f (%+5.1f%%)" % (v, x, 100 * (x / m[0] - 1)) for v, x in zip(vs, m)) + ("" if same else "  DIFF"))
print("Adaptive's overhead over the coder it picks (median time ratio - 1):")
for k in keys:
    if k[1] != "adaptive": continue
    t = [int(x) for x in tiles[(vs[-1],) + k].split("/")]; pick = ["raw", "fixed_length", "huffman", "zero_run"][t.index(max(t))]
    p = (k[0], pick, k[2])
    if (vs[0],) + p not in comp: continue
    print("%-12s %s picks %-12s " % (k[0], k[2], pick) + "  ".join("%s %+5.1f%%" % (v, 100 * (st.median(comp[(v,) + p]) / st.median(comp[(v,) + k]) - 1)) for v in vs))
PY
