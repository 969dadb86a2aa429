#!/usr/bin/env python3
"""Reads `nvdisasm -g -c` output on stdin: for each encode_kernel whose name matches argv[1..],
the source lines (file:line, from the line-info comments) where local loads and stores (spills,
stack) sit, with counts."""
import sys, re, collections
want = sys.argv[1:]
func = None; loc = None; hits = collections.defaultdict(collections.Counter); names = {}
for line in sys.stdin:
    m = re.match(r'^\s*\.section\s+\.text\.([^,\s]+)', line) or re.match(r'^\s*\.?(?:text\.)?(_Z\S+):\s*$', line)
    if m:
        func = m.group(1); continue
    m = re.search(r'//## File "([^"]+)", line (\d+)', line)
    if m:
        loc = "%s:%s" % (m.group(1).split("/include/")[-1].split("/benchmarks/")[-1], m.group(2)); continue
    if func and re.search(r'\b(STL|LDL)(\.\S+)?\b', line):
        op = re.search(r'\b(STL|LDL)', line).group(1)
        hits[func][(op, loc)] += 1
import subprocess
for f, c in hits.items():
    d = subprocess.run(["c++filt", f], capture_output=True, text=True).stdout.strip()
    if "encode_kernel" not in d or not all(w in d for w in want): continue
    print("==", d[:200])
    for (op, l), n in sorted(c.items(), key=lambda x: -x[1])[:25]: print("  %s %3d %s" % (op, n, l))
