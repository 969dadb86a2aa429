"""overhead.py BUILD TABLE...: Adaptive's overhead over the coder it picks for one build (h: the code before session 20; f: bf46da3; g3, s1: this session's tries) in each call's table, RelBound / AbsBound (median time ratio - 1), and over the pooled rounds."""
import sys, statistics as st, collections as c
build, calls = sys.argv[1], sys.argv[2:]
per = []
pool_r = c.defaultdict(list); pool_a = c.defaultdict(list); tiles = {}
for t in calls:
    comp = c.defaultdict(list); absb = c.defaultdict(list)
    for l in open(t):
        f = l.split()
        if f[0] != build: continue
        k = (f[2], f[3], f[5]); comp[k].append(float(f[7])); absb[k].append(float(f[11])); tiles[k] = f[-1]
        pool_r[k].append(float(f[7])); pool_a[k].append(float(f[11]))
    per.append((comp, absb))
print("build %s" % build)
print("%-12s %-6s %-12s " % ("input", "bound", "picks") + "  ".join("%-13s" % t.split("/")[0] for t in calls) + "  pooled")
for k in sorted(tiles):
    if k[1] != "adaptive": continue
    t = [int(x) for x in tiles[k].split("/")]; pick = ["raw", "fixed_length", "huffman", "zero_run"][t.index(max(t))]
    p = (k[0], pick, k[2])
    cells = ["%+5.1f/%+5.1f" % (100 * (st.median(cr[p]) / st.median(cr[k]) - 1), 100 * (st.median(ca[p]) / st.median(ca[k]) - 1)) if cr[k] else "-" for cr, ca in per]
    pooled = "%+5.1f/%+5.1f (%d rounds)" % (100 * (st.median(pool_r[p]) / st.median(pool_r[k]) - 1), 100 * (st.median(pool_a[p]) / st.median(pool_a[k]) - 1), len(pool_r[k]))
    print("%-12s %-6s %-12s " % (k[0], k[2], pick) + "  ".join("%-13s" % x for x in cells) + "  " + pooled)
