#!/usr/bin/env python3
"""by_line.py DISASM CSV_A CSV_B NAME_A NAME_B: ncu's SASS source page (csv, one row an
instruction) of two encode kernels, joined with `nvdisasm -g -c` line info by the instruction's
offset in its function, summed per innermost source line; prints lines by B - A executed warp
instructions. DISASM holds the nvdisasm text of the cubins; the kernels are found by the
regular expressions NAME_A / NAME_B searched in the demangled names (e.g.
"EntropyCoder<ncclz::Huffman> ?>, float,": "float" alone also matches the bf16 kernel's name).
Session 18 wrote it; its one call matched by substrings, found two kernels and stopped, so the
join itself has not run yet."""
import sys, re, csv, collections, subprocess
dis, ca, cb, na, nb = sys.argv[1:6]
funcs = collections.defaultdict(dict)  # mangled -> offset -> loc
func = None; loc = "?"
for line in open(dis, errors="replace"):
    m = re.match(r'^\s*\.section\s+\.text\.([^,\s]+)', line) or re.match(r'^\s*\.?(?:text\.)?(_Z\S+):\s*$', line)
    if m:
        func = m.group(1); loc = "?"; continue
    m = re.search(r'//## File "([^"]+)", line (\d+)', line)
    if m:
        loc = "%s:%s" % (m.group(1).split("/include/")[-1].split("/benchmarks/")[-1].split("ncclz/")[-1], m.group(2)); continue
    m = re.search(r'/\*([0-9a-f]{4,})\*/', line)
    if func and m:
        funcs[func][int(m.group(1), 16)] = loc
names = {f: subprocess.run(["c++filt", f], capture_output=True, text=True).stdout.strip() for f in funcs}
def find(spec):
    c = [f for f in funcs if "encode_kernel" in names[f] and re.search(spec, names[f])]
    if len(c) != 1: print("kernel for", spec, ":", len(c), [names[f][:160] for f in c][:4]); sys.exit(1)
    return c[0]
def read(path, f):
    rows = list(csv.reader(open(path, errors="replace")))
    hi = next(i for i, r in enumerate(rows) if any(x.strip() == "Address" or x.strip() == "# Address" for x in r))
    h = [x.strip() for x in rows[hi]]
    ia = h.index("# Address") if "# Address" in h else h.index("Address")
    ie = h.index("Instructions Executed")
    iw = next((i for i, x in enumerate(h) if x.startswith("Warp Stall Sampling (All")), None)
    data = []
    for r in rows[hi + 1:]:
        if len(r) <= max(ia, ie): continue
        try: a = int(r[ia].strip(), 16); n = int(float(r[ie].replace(",", "") or 0)); w = int(float(r[iw].replace(",", "") or 0)) if iw is not None else 0
        except ValueError: continue
        data.append((a, n, w))
    base = min(a for a, _, _ in data)
    by = collections.Counter(); st = collections.Counter(); miss = 0
    for a, n, w in data:
        l = funcs[f].get(a - base)
        if l is None: miss += n; l = "?unmapped"
        by[l] += n; st[l] += w
    print("%s: %d instructions, %d executed, %d unmapped" % (path, len(data), sum(by.values()), miss))
    return by, st
fa, fb = find(na), find(nb)
ba, sa = read(ca, fa); bb, sb = read(cb, fb)
ta, tb = sum(ba.values()), sum(bb.values())
print("total A %d B %d (B - A %d, %+.1f%%); stall samples A %d B %d" % (ta, tb, tb - ta, 100.0 * (tb / ta - 1), sum(sa.values()), sum(sb.values())))
print("%-42s %11s %11s %11s %8s %8s" % ("line", "A", "B", "B-A", "stallA", "stallB"))
for l in sorted(set(ba) | set(bb), key=lambda l: -(abs(bb[l] - ba[l]) + 0.0 * bb[l]))[:70]:
    print("%-42s %11d %11d %11d %8d %8d" % (l[-42:], ba[l], bb[l], bb[l] - ba[l], sa[l], sb[l]))
