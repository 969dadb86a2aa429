# Folds a call's table.txt by (input with its dtype suffix, bound, coder): min-max encode GB/s per build.
#   python3 summ_dtypes.py TABLE base,zsg,...
import collections, sys
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    f = line.split()
    v, inp, coder, mib, bound, ratio, enc = f[:7]
    rows[(inp, bound, coder)].append((v, float(ratio), float(enc), f[-1]))
for k in sorted(rows):
    print(k, '  '.join('%s %.2f %4.0f-%-4.0f %s' % (v, [x for x in rows[k] if x[0] == v][0][1], min(x[2] for x in rows[k] if x[0] == v),
                      max(x[2] for x in rows[k] if x[0] == v), [x for x in rows[k] if x[0] == v][0][3]) for v in sys.argv[2].split(',') if any(x[0] == v for x in rows[k])))
