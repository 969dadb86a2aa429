# Adaptive's overhead over the coder it picks (1 - Adaptive / that coder, medians of compress
# GB/s with RelBound) per build of a call's table.txt; the picked coder's median pooled over every
# build too where its kernels are the same in all of them (FixedLength, Huffman here).
#   python3 overhead.py TABLE base,new
import collections, statistics, sys
runs = collections.defaultdict(list)
modes = {}
for line in open(sys.argv[1]):
    f = line.split()
    v, inp, coder, bound, comp = f[0], f[2], f[3], f[5], float(f[7])
    runs[(inp, bound, coder, v)].append(comp)
    if coder == 'adaptive': modes[(inp, bound, v)] = f[-1]
vs = sys.argv[2].split(',')
print('%-14s %-6s %-13s %s' % ('input', 'bound', 'picks', '  '.join('%-26s' % (v + ': adaptive/own/pooled') for v in vs)))
for (inp, bound, v0) in sorted({(i, b, None) for (i, b, c, v) in runs}):
    m = modes.get((inp, bound, vs[0]))
    if not m: continue
    counts = [int(x) for x in m.split('/')]  # raw/fixed_length/huffman/zero_run tiles
    picked = ['raw', 'fixed_length', 'huffman', 'zero_run'][counts.index(max(counts))]
    pooled = statistics.median(x for v in vs for x in runs.get((inp, bound, picked, v), []))  if any((inp, bound, picked, v) in runs for v in vs) else None
    cells = []
    for v in vs:
        a = runs.get((inp, bound, 'adaptive', v)); own = runs.get((inp, bound, picked, v))
        if not a or not own: cells.append('%-26s' % '-'); continue
        am, om = statistics.median(a), statistics.median(own)
        cells.append('%-26s' % ('%4.0f %5.1f%% %5.1f%%' % (am, 100 * (1 - am / om), 100 * (1 - am / pooled))))
    print('%-14s %-6s %-13s %s' % (inp, bound, picked, '  '.join(cells)))
