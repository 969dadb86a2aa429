#!/usr/bin/env bash
# Session 18, call 4: GPU tests of z2 (z + the fixed_length layout worked out only where a fixed_length tile is written); the codec bench of y, z and z2, rounds alternating.
set -uo pipefail
A=xr16
V="y z z2"
tar xJf xr11/pack/data.tar.xz && tar xJf $A/prebuilt.tar.xz && tar xJf $A/bins3.tar.xz -C $A
export LD_LIBRARY_PATH="$PWD/prebuilt/lib"
cp prebuilt/benchmarks/ncclz-codec-bench $A/codec-y
mkdir -p "$OUT/logs"
start=$SECONDS
timeout 150 $A/gpu_tests-z2 > "$OUT/logs/gpu_tests-z2.log" 2>&1
echo "gpu_tests z2 rc=$? $(tail -3 "$OUT/logs/gpu_tests-z2.log" | tr '\n' ' ') at $((SECONDS - start)) s" >> "$OUT/status.txt"
one() {  # variant input coders round bounds dtypes
  timeout 60 "$A/codec-$1" --data data --only $2 --bounds $5 --coders $3 --runs 7 --size-mb 64 --seed 7 --dtype $6 >"$OUT/logs/codec-$1-$2-$4.log" 2>&1
  echo "$1 $2 $4 rc=$? $(grep -E '^(OK|FAILED):' "$OUT/logs/codec-$1-$2-$4.log") at $((SECONDS - start)) s" >> "$OUT/status.txt"
  grep -E "^(smooth|noise)" "$OUT/logs/codec-$1-$2-$4.log" | awk -v w="$1" -v r="$4" '{print w, r, $0}' >> "$OUT/table.txt"
}
for round in 1 2 3 4 5 6; do
  [ $((SECONDS - start)) -gt ${BENCH_UNTIL:-250} ] && break
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
