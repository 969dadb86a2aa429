#!/usr/bin/env bash
# Session 21, call 2: GPU tests of s1 (stage loads batched, the value before the warp read with them); codec bench of f (bf46da3) and s1, alternating.
set -uo pipefail
A=xr16
V="f s1"
tar xJf xr11/pack/data.tar.xz && tar xJf $A/bins21b.tar.xz -C $A
mkdir -p "$OUT/logs"
start=$SECONDS
for t in s1; do
  timeout 200 $A/gpu_tests-$t > "$OUT/logs/gpu_tests-$t.log" 2>&1
  echo "gpu_tests $t rc=$? $(tail -3 "$OUT/logs/gpu_tests-$t.log" | tr '\n' ' ') at $((SECONDS - start)) s" >> "$OUT/status.txt"
done
one() {  # variant input coders round bounds dtypes
  timeout 60 "$A/codec-$1" --data data --only $2 --bounds $5 --coders $3 --runs 7 --size-mb 64 --seed 7 --dtype $6 >"$OUT/logs/codec-$1-$2-$4.log" 2>&1
  echo "$1 $2 $4 rc=$? $(grep -E '^(OK|FAILED):' "$OUT/logs/codec-$1-$2-$4.log") at $((SECONDS - start)) s" >> "$OUT/status.txt"
  grep -E "^(smooth|noise)" "$OUT/logs/codec-$1-$2-$4.log" | awk -v w="$1" -v r="$4" '{print w, r, $0}' >> "$OUT/table.txt"
}
for round in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do
  [ $((SECONDS - start)) -gt ${BENCH_UNTIL:-330} ] && break
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
