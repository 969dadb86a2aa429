#!/usr/bin/env python3
"""opcode_diff.py A.csv B.csv [...]: ncu's SASS source page (`ncu -i R --page source --csv
--print-source sass`, one row an instruction) of encode kernels, in pairs: each pair's executed
warp instructions, barriers and stall samples, and the opcodes B executes more of than A."""
import csv, collections, re, sys
def read(path):
    rows = list(csv.reader(open(path, errors="replace")))
    h = next(r for r in rows if "Instructions Executed" in r)
    start = rows.index(h) + 1
    ie, iw = h.index("Instructions Executed"), h.index("Warp Stall Sampling (All Samples)")
    ops, stalls = collections.Counter(), 0
    for r in rows[start:]:
        if len(r) > ie and r[ie].isdigit():
            text = re.sub(r'^@!?U?P[T0-9]+\s+', '', r[1].strip())
            ops[(text.split() or ["?"])[0].split('.')[0]] += int(r[ie])
            stalls += int(r[iw]) if r[iw].isdigit() else 0
    return ops, stalls
paths = sys.argv[1:]
for a, b in zip(paths[::2], paths[1::2]):
    (A, sa), (B, sb) = read(a), read(b)
    ta, tb = sum(A.values()), sum(B.values())
    print("== %s -> %s: executed %d -> %d (%+.1f%%), BAR %d -> %d, stall samples %d -> %d (%+.1f%%)" %
          (a, b, ta, tb, 100.0 * (tb / ta - 1), A["BAR"], B["BAR"], sa, sb, 100.0 * (sb / sa - 1)))
    for op in sorted(set(A) | set(B), key=lambda o: -(B[o] - A[o]))[:20]:
        print("  %-8s %10d %10d %+9d" % (op, A[op], B[op], B[op] - A[op]))
