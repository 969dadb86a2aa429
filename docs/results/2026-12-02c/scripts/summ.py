# Folds a call's table.txt (variant round input coder MiB bound ratio comp % decomp % comp_abs % ...)
# by (input, bound, coder): median comp (and comp_abs) GB/s per variant, and the ratio.
#   python3 summ.py TABLE base,st,...
import collections, statistics, sys
rows = collections.defaultdict(lambda: collections.defaultdict(list))
ratio = {}
for line in open(sys.argv[1]):
    f = line.split()
    v, rnd, inp, coder, mib, bound, r, comp, _, dec, _, cabs = f[:12]
    rows[(inp, bound, coder)][v].append((float(comp), float(cabs), float(dec)))
    ratio[(inp, bound, coder, v)] = r
vs = sys.argv[2].split(',')
print('%-14s %-6s %-12s' % ('input', 'bound', 'coder') + ''.join('%22s' % (v + ' comp/abs/dec') for v in vs))
for k in sorted(rows):
    cells = []
    for v in vs:
        x = rows[k].get(v)
        if not x: cells.append('%22s' % '-'); continue
        cells.append('%22s' % ('%4.0f/%4.0f/%4.0f r%s' % (statistics.median(a for a, _, _ in x), statistics.median(b for _, b, _ in x), statistics.median(c for _, _, c in x), ratio[k + (v,)])))
    print('%-14s %-6s %-12s' % k + ''.join(cells))
