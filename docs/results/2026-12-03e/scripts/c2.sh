#!/usr/bin/env bash
# Session 20, call 2: GPU tests of n2 (n1 with zz zeroed where a block has no elements, and the new test of huffman tiles wider than a word); ncu SourceCounters of n2 (the rows profiled in session 19, and f32 noise 1e-4); codec bench of h and n2, rounds alternating.
set -uo pipefail
A=xr16
V="h n2"
tar xJf xr11/pack/data.tar.xz && tar xJf $A/bins10.tar.xz -C $A
mkdir -p "$OUT/logs"
start=$SECONDS
for t in n2; do
  timeout 200 $A/gpu_tests-$t > "$OUT/logs/gpu_tests-$t.log" 2>&1
  echo "gpu_tests $t rc=$? $(tail -3 "$OUT/logs/gpu_tests-$t.log" | tr '\n' ' ') at $((SECONDS - start)) s" >> "$OUT/status.txt"
done
NCU="ncu --clock-control none --kernel-name-base demangled --section SourceCounters --section LaunchStats --section Occupancy"
mkdir -p "$OUT/p"
prof() {  # name coder dtype regex input
  timeout 90 $NCU -k "regex:$4" --launch-skip 1 --launch-count 1 -o "$A/$1" $A/codec-n2 --data data --only $5 --bounds 1e-4 --coders $2 --runs 1 --size-mb 64 --seed 7 --dtype $3 >"$OUT/p/$1_run.txt" 2>&1
  ncu -i "$A/$1.ncu-rep" --page source --csv --print-source sass > "$A/$1.csv" 2>&1
  ncu -i "$A/$1.ncu-rep" --page details > "$OUT/p/$1_details.txt" 2>&1
  echo "prof $1 at $((SECONDS - start)) s $(grep -c '' $A/$1.csv) rows" >> "$OUT/status.txt"
}
prof bf16_huffman huffman bf16 "encode_kernel<.*RelBound.*Huffman.*>, __nv_bfloat16, " smooth
prof bf16_adaptive adaptive bf16 "encode_kernel<.*RelBound.*Adaptive.*>, __nv_bfloat16, " smooth
prof f16abs_fixed fixed_length f16 "encode_kernel<.*AbsBound.*FixedLength.*>, __half, " smooth
prof f16abs_adaptive adaptive f16 "encode_kernel<.*AbsBound.*Adaptive.*>, __half, " smooth
prof f32noise_huffman huffman f32 "encode_kernel<.*RelBound.*Huffman.*>, float, " noise
prof f32noise_adaptive adaptive f32 "encode_kernel<.*RelBound.*Adaptive.*>, float, " noise
tar cJf "$OUT/raw.tar.xz" -C $A bf16_huffman.csv bf16_adaptive.csv f16abs_fixed.csv f16abs_adaptive.csv f32noise_huffman.csv f32noise_adaptive.csv 2>/dev/null
cd "$OUT/p" && tar czf ../p.tgz . && cd - >/dev/null && rm -rf "$OUT/p"
one() {  # variant input coders round bounds dtypes
  timeout 60 "$A/codec-$1" --data data --only $2 --bounds $5 --coders $3 --runs 7 --size-mb 64 --seed 7 --dtype $6 >"$OUT/logs/codec-$1-$2-$4.log" 2>&1
  echo "$1 $2 $4 rc=$? $(grep -E '^(OK|FAILED):' "$OUT/logs/codec-$1-$2-$4.log") at $((SECONDS - start)) s" >> "$OUT/status.txt"
  grep -E "^(smooth|noise)" "$OUT/logs/codec-$1-$2-$4.log" | awk -v w="$1" -v r="$4" '{print w, r, $0}' >> "$OUT/table.txt"
}
for round in 1 2 3 4 5 6 7 8 9 10; do
  [ $((SECONDS - start)) -gt ${BENCH_UNTIL:-320} ] && break
  for v in $V; do
    one $v smooth fixed_length,zero_run,huffman,adaptive $round 1e-3,1e-4 f32,f16,bf16
    one $v noise huffman,fixed_length,adaptive $round 1e-3,1e-4 f32,f16,bf16
  done
done
echo "bench done at $((SECONDS - start)) s" >> "$OUT/status.txt"
cd "$OUT/logs" && tar czf ../logs.tgz . && cd .. && rm -rf logs
cat status.txt | grep -v "rc=0 OK"
python3 - table.txt $V <<'PY'
import sys, statistics as st, collections as c
vs = sys.argv[2:]
comp = c.defaultdict(list); absb = c.defaultdict(list); tiles = {}; ratio = {}
for l in open(sys.argv[1]):
    f = l.split(); k = (f[0], f[2], f[3], f[5]); comp[k].append(float(f[7])); absb[k].append(float(f[11])); tiles[k] = f[-1]; ratio[k] = f[6]
keys = sorted({k[1:] for k in comp})
for k in keys:
    same = all(ratio.get((v,) + k) == ratio.get((vs[0],) + k) and tiles.get((v,) + k) == tiles.get((vs[0],) + k) for v in vs)
    if not same: print("DIFF", k)
print("Adaptive's overhead over the coder it picks (median time ratio - 1), RelBound / AbsBound; n rounds:", len(comp[(vs[0],) + keys[0]]))
for k in keys:
    if k[1] != "adaptive": continue
    t = [int(x) for x in tiles[(vs[-1],) + k].split("/")]; pick = ["raw", "fixed_length", "huffman", "zero_run"][t.index(max(t))]
    p = (k[0], pick, k[2])
    if (vs[0],) + p not in comp: continue
    print("%-12s %s %-12s " % (k[0], k[2], pick) + "  ".join("%s %+5.1f/%+5.1f (%5.0f)" % (v, 100 * (st.median(comp[(v,) + p]) / st.median(comp[(v,) + k]) - 1), 100 * (st.median(absb[(v,) + p]) / st.median(absb[(v,) + k]) - 1), st.median(absb[(v,) + k])) for v in vs))
PY
python3 - table.txt $V <<'PY'
import sys, statistics as st, collections as c, math
vs = sys.argv[2:]
comp = c.defaultdict(list); absb = c.defaultdict(list)
for l in open(sys.argv[1]):
    f = l.split(); k = (f[0], f[2], f[3], f[5]); comp[k].append(float(f[7])); absb[k].append(float(f[11]))
print("geomean of variant / %s (RelBound, AbsBound) per coder:" % vs[0])
for coder in ["adaptive", "huffman", "fixed_length", "zero_run"]:
    out = []
    for v in vs[1:]:
        r = [math.log(st.median(comp[(v,) + k[1:]]) / st.median(comp[k])) for k in comp if k[0] == vs[0] and k[2] == coder]
        a = [math.log(st.median(absb[(v,) + k[1:]]) / st.median(absb[k])) for k in comp if k[0] == vs[0] and k[2] == coder]
        out.append("%s %+.1f%% / %+.1f%%" % (v, 100 * (math.exp(sum(r) / len(r)) - 1), 100 * (math.exp(sum(a) / len(a)) - 1)))
    print("  %-12s " % coder + "   ".join(out))
print("huffman f32 rows (Rel / Abs GB/s):")
for k in sorted(comp):
    if k[0] == vs[0] and k[2] == "huffman" and k[1] in ("noise", "smooth", "smooth_bf16"):
        print("  %-12s %s " % (k[1], k[3]) + "  ".join("%s %5.0f/%5.0f" % (v, st.median(comp[(v,) + k[1:]]), st.median(absb[(v,) + k[1:]])) for v in vs))
PY
