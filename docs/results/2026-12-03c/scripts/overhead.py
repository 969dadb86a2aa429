#!/usr/bin/env python3
"""overhead.py TABLE BUILD...: Adaptive's overhead over the coder it picks (the mode most of its
tiles take), median time over the rounds, RelBound (comp_GB/s) / AbsBound (comp_abs_GB/s), per
build. TABLE rows: build, round, then the codec bench's row."""
import sys, statistics as st, collections as c
rows = [l.split() for l in open(sys.argv[1])]
builds = sys.argv[2:]
speed = c.defaultdict(list); tiles = {}
for f in rows:
    k = (f[0], f[2], f[3], f[5]); speed[k + ("rel",)].append(float(f[7])); speed[k + ("abs",)].append(float(f[11])); tiles[k] = f[-1]
inputs = sorted({(f[2], f[5]) for f in rows if f[3] == "adaptive"})
for name, bound in inputs:
    t = [int(x) for x in tiles[(builds[-1], name, "adaptive", bound)].split("/")]
    pick = ["raw", "fixed_length", "huffman", "zero_run"][t.index(max(t))]
    cells = []
    for b in builds:
        o = [100 * (st.median(speed[(b, name, pick, bound, q)]) / st.median(speed[(b, name, "adaptive", bound, q)]) - 1) for q in ("rel", "abs")]
        cells.append("%s %+5.1f / %+5.1f" % (b, o[0], o[1]))
    print("%-11s %s %-12s %-14s rounds %d   %s" % (name, bound, pick, tiles[(builds[-1], name, "adaptive", bound)], len(speed[(builds[-1], name, "adaptive", bound, "rel")]), "   ".join(cells)))
