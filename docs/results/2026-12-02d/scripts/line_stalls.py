# python3 line_stalls.py SASS_CSV CUBIN FILE:LINE,... (the CSV gunzipped from call3/)
# Stall reasons of the instructions of given source lines (ncu SASS CSV + a cubin of the same kernel built with -lineinfo).
import bisect, collections, csv, sys
g = {}; argv = sys.argv; sys.argv = ['x', 'none']
exec(open('/work/main/docs/results/2026-12-02b/scripts/sasslite.py').read(), g); sys.argv = argv
rows = []; hdr = None
for rec in csv.reader(open(sys.argv[1])):
    if hdr is None:
        if 'Address' in rec: hdr = rec
        continue
    if len(rec) != len(hdr): continue
    try: rows.append((int(rec[hdr.index('Address')], 16), rec))
    except ValueError: pass
base = rows[0][0]
lines = g['line_rows'](sys.argv[2]); addrs = [x[0] for x in lines]
want = set(sys.argv[3].split(','))
stall_cols = [i for i, h in enumerate(hdr) if h.startswith('stall_') and 'Not Issued' not in h]
tot = collections.defaultdict(lambda: collections.Counter())
for a, rec in rows:
    k = bisect.bisect_right(addrs, a - base) - 1
    key = '%s:%d' % (lines[k][1].split('/')[-1], lines[k][2])
    if key in want:
        for i in stall_cols: tot[key][hdr[i]] += int(rec[i] or 0)
for k in sorted(tot): print(k, ' '.join('%s=%d' % (n[6:], c) for n, c in tot[k].most_common(4) if c))
