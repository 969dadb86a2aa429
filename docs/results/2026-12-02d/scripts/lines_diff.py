# python3 lines_diff.py ADAPTIVE_LINES FIXED_LENGTH_LINES WARPS (the outputs of session 9's ncu_lines.py with TOP 100000)
# Adaptive vs FixedLength, per source line: executed instructions per warp and stall samples (ncu_lines.py output).
import re, collections, sys
def load(f):
    d = {}
    for l in open(f):
        if l.startswith('#'): continue
        m = re.match(r'(\S+)\s+samples\s+([\d.]+)%\s+\(\s*(\d+)\)\s+executed\s+([\d.]+)%\s+\(\s*(\d+)\)\s+instructions (\d+)', l)
        d[m.group(1)] = (int(m.group(3)), int(m.group(5)))
    return d
a, f = load(sys.argv[1]), load(sys.argv[2]); warps = float(sys.argv[3])
print('# samples: adaptive %d fixed_length %d; executed per warp: %.0f / %.0f' % (sum(v[0] for v in a.values()), sum(v[0] for v in f.values()), sum(v[1] for v in a.values()) / warps, sum(v[1] for v in f.values()) / warps))
byf = collections.defaultdict(lambda: [0.0, 0])
for k in set(a) | set(f):
    fn = k.split(':')[0]
    byf[fn][0] += (a.get(k, (0, 0))[1] - f.get(k, (0, 0))[1]) / warps
    byf[fn][1] += a.get(k, (0, 0))[0] - f.get(k, (0, 0))[0]
print('# by file: extra executed per warp, extra samples')
for k, v in sorted(byf.items(), key=lambda kv: -kv[1][1]):
    if abs(v[0]) >= 1 or abs(v[1]) >= 10: print('%-28s %7.1f %6d' % (k, v[0], v[1]))
print('# by line, most extra samples first')
rows = sorted(set(a) | set(f), key=lambda k: -(a.get(k, (0, 0))[0] - f.get(k, (0, 0))[0]))
for k in rows[:25]:
    print('%-34s samples %5d (FL %5d)  executed/warp %+7.1f' % (k, a.get(k, (0, 0))[0], f.get(k, (0, 0))[0], (a.get(k, (0, 0))[1] - f.get(k, (0, 0))[1]) / warps))
