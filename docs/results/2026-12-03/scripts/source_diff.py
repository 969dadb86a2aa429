import csv, gzip, sys, collections
def load(fn):
    d = {}; f = None; hdr = None
    for row in csv.reader(gzip.open(fn, 'rt')):
        if not row: continue
        if row[0] == 'File Path': f = row[1].split('/')[-1]; continue
        if row[0] == 'Function Name': continue
        if row[0] == 'Line No': hdr = row; ie = row.index('Instructions Executed'); sm = row.index('Warp Stall Sampling (All Samples)'); continue
        if row[0] != '' and hdr:
            try: d[(f, int(row[0]))] = (int(row[ie]), int(row[sm]), row[1].strip()[:90])
            except ValueError: pass
    return d
a = load(sys.argv[1]); b = load(sys.argv[2])
ta = sum(v[0] for v in a.values()); tb = sum(v[0] for v in b.values())
print("total instr", sys.argv[1], ta, sys.argv[2], tb, "diff", ta - tb)
byfile = collections.Counter()
for k, v in a.items(): byfile[k[0]] += v[0] - b.get(k, (0,0,''))[0]
for k in b:
    if k not in a: byfile[k[0]] -= b[k][0]
print("by file:", byfile.most_common())
rows = []
for k in set(a) | set(b):
    x = a.get(k, (0,0,'')); y = b.get(k, (0,0,''))
    rows.append((x[0]-y[0], x[1]-y[1], k, x[2] or y[2]))
rows.sort(key=lambda r: -r[0])
for r in rows[:40]: print("%9d %6d %-28s %5d %s" % (r[0], r[1], r[2][0], r[2][1], r[3]))
print('...most negative')
for r in rows[-8:]: print("%9d %6d %-28s %5d %s" % (r[0], r[1], r[2][0], r[2][1], r[3]))
