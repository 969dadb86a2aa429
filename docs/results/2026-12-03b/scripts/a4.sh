#!/usr/bin/env bash
# Session 17, call 4: GPU tests of s (block_exclusive_sum: the warps' totals by lane, warp reductions for
# u32 and a three-step lane scan for u64; the stream bits in u32); the codec bench of k (a6343f3) and s,
# three rounds alternating, 64 MiB f32, f16, bf16 (and the bench's smooth_f64).
set -uo pipefail
A=xr15/a4
V="k s"
tar xJf xr11/pack/data.tar.xz
tar xJf $A/bins.tar.xz -C $A
mkdir -p "$OUT/logs"
start=$SECONDS
timeout 150 $A/gpu_tests-s > "$OUT/logs/gpu_tests-s.log" 2>&1
echo "gpu_tests s rc=$? $(tail -3 "$OUT/logs/gpu_tests-s.log" | tr '\n' ' ') at $((SECONDS - start)) s" >> "$OUT/status.txt"
one() {  # variant input coders round bounds
  timeout 60 "$A/codec-$1" --data data --only $2 --bounds $5 --coders $3 --runs 7 --size-mb 64 --seed 7 --dtype $6 >"$OUT/logs/codec-$1-$2-$4.log" 2>&1
  echo "$1 $2 $4 rc=$? $(grep -E '^(OK|FAILED):' "$OUT/logs/codec-$1-$2-$4.log") at $((SECONDS - start)) s" >> "$OUT/status.txt"
  grep -E "^(concat|smooth|noise)" "$OUT/logs/codec-$1-$2-$4.log" | sed 's/concat(13 fields, tiled)x[0-9.]*/concat/' | awk -v w="$1" -v r="$4" '{print w, r, $0}' >> "$OUT/table.txt"
}
for round in 1 2 3; do
  [ $((SECONDS - start)) -gt 200 ] && break
  for v in $V; do
    one $v smooth fixed_length,zero_run,huffman,adaptive $round 1e-3,1e-4 f32,f16,bf16
    one $v noise huffman,fixed_length,adaptive $round 1e-3,1e-4 f32,f16,bf16
    one $v concat huffman,adaptive $round 1e-3,1e-4 f32
  done
done
echo "bench done at $((SECONDS - start)) s" >> "$OUT/status.txt"
cd "$OUT/logs" && tar czf ../logs.tgz . && cd .. && rm -rf logs
cat status.txt | grep -v "rc=0 OK" | head
python3 - table.txt $V <<'PY'
import sys, statistics as st, collections as c
vs = sys.argv[2:]
comp = c.defaultdict(list); tiles = {}
for l in open(sys.argv[1]):
    f = l.split(); comp[(f[0], f[2], f[3], f[5])].append(float(f[7])); tiles[(f[0], f[2], f[3], f[5])] = f[-1]
keys = sorted({k[1:] for k in comp})
for k in keys:
    if k[1] == "raw": continue
    m = [st.median(comp[(v,) + k]) if (v,) + k in comp else 0 for v in vs]
    print("%-30s" % " ".join(k) + " ".join("%s %6.1f (%+5.1f%%)" % (v, x, 100 * (x / m[0] - 1)) for v, x in zip(vs, m)))
print("Adaptive's overhead over the coder it picks (median time ratio - 1):")
for k in keys:
    if k[1] != "adaptive": continue
    t = [int(x) for x in tiles[(vs[0],) + k].split("/")]; pick = ["raw", "fixed_length", "huffman", "zero_run"][t.index(max(t))]
    p = (k[0], pick, k[2])
    if (vs[0],) + p not in comp: continue
    print("%-8s %s picks %-12s " % (k[0], k[2], pick) + "  ".join("%s %+5.1f%%" % (v, 100 * (st.median(comp[(v,) + p]) / st.median(comp[(v,) + k]) - 1)) for v in vs))
PY
