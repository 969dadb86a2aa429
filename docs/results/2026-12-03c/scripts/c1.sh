#!/usr/bin/env bash
# Session 18, call 1: y = a5e6c7f + next-give-up.patch (prebuilt from build-me). Its GPU tests
# (with the new walk case), then the codec bench of s (e3b4e90) against y, rounds alternating:
# smooth (f32/f16/bf16 and smooth_f64) with every coder at 1e-3 and 1e-4, noise with huffman,
# fixed_length and adaptive. Then Adaptive's overhead over the coder it picks.
set -uo pipefail
A=xr16
V="s y"
tar xJf xr11/pack/data.tar.xz && tar xJf $A/prebuilt.tar.xz && tar xJf $A/bins.tar.xz -C $A
export LD_LIBRARY_PATH="$PWD/prebuilt/lib"
cp prebuilt/benchmarks/ncclz-codec-bench $A/codec-y
mkdir -p "$OUT/logs"
start=$SECONDS
timeout 150 prebuilt/test/gpu_tests > "$OUT/logs/gpu_tests-y.log" 2>&1
echo "gpu_tests y rc=$? $(tail -3 "$OUT/logs/gpu_tests-y.log" | tr '\n' ' ') at $((SECONDS - start)) s" >> "$OUT/status.txt"
one() {  # variant input coders round bounds dtypes
  timeout 60 "$A/codec-$1" --data data --only $2 --bounds $5 --coders $3 --runs 7 --size-mb 64 --seed 7 --dtype $6 >"$OUT/logs/codec-$1-$2-$4.log" 2>&1
  echo "$1 $2 $4 rc=$? $(grep -E '^(OK|FAILED):' "$OUT/logs/codec-$1-$2-$4.log") at $((SECONDS - start)) s" >> "$OUT/status.txt"
  grep -E "^(smooth|noise)" "$OUT/logs/codec-$1-$2-$4.log" | awk -v w="$1" -v r="$4" '{print w, r, $0}' >> "$OUT/table.txt"
}
for round in 1 2 3; do
  [ $((SECONDS - start)) -gt ${BENCH_UNTIL:-330} ] && break
  for v in $V; do
    one $v smooth fixed_length,zero_run,huffman,adaptive $round 1e-3,1e-4 f32,f16,bf16
    one $v noise huffman,fixed_length,adaptive $round 1e-3,1e-4 f32,f16,bf16
  done
done
echo "bench done at $((SECONDS - start)) s" >> "$OUT/status.txt"
cd "$OUT/logs" && tar czf ../logs.tgz . && cd .. && rm -rf logs
grep -v "rc=0 OK" status.txt | head
python3 - table.txt $V <<'PY'
import sys, statistics as st, collections as c
vs = sys.argv[2:]
comp = c.defaultdict(list); tiles = {}; ratio = {}
for l in open(sys.argv[1]):
    f = l.split(); k = (f[0], f[2], f[3], f[5]); comp[k].append(float(f[7])); tiles[k] = f[-1]; ratio[k] = f[6]
keys = sorted({k[1:] for k in comp})
for k in keys:
    if k[1] == "raw": continue
    m = [st.median(comp[(v,) + k]) if (v,) + k in comp else 0 for v in vs]
    same = all(ratio.get((v,) + k) == ratio.get((vs[0],) + k) and tiles.get((v,) + k) == tiles.get((vs[0],) + k) for v in vs)
    print("%-30s" % " ".join(k) + " ".join("%s %6.1f (%+5.1f%%)" % (v, x, 100 * (x / m[0] - 1)) for v, x in zip(vs, m)) + ("" if same else "  DIFF " + " | ".join("%s %s" % (ratio.get((v,) + k), tiles.get((v,) + k)) for v in vs)))
print("Adaptive's overhead over the coder it picks (median time ratio - 1):")
for k in keys:
    if k[1] != "adaptive": continue
    t = [int(x) for x in tiles[(vs[-1],) + k].split("/")]; pick = ["raw", "fixed_length", "huffman", "zero_run"][t.index(max(t))]
    p = (k[0], pick, k[2])
    if (vs[0],) + p not in comp: continue
    print("%-12s %s picks %-12s %s " % (k[0], k[2], pick, tiles[(vs[-1],) + k]) + "  ".join("%s %+5.1f%%" % (v, 100 * (st.median(comp[(v,) + p]) / st.median(comp[(v,) + k]) - 1)) for v in vs))
PY
