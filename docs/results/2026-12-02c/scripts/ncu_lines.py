# Per source line: ncu stall samples and executed instructions of one kernel, from
# `ncu --page source --csv --print-source sass` and a cubin of the same kernel built here with
# -lineinfo (its .debug_line maps each instruction offset to a line).
#   /usr/bin/python3 ncu_lines.py SASS_CSV CUBIN [TOP]
import bisect, collections, csv, sys
g = {}
argv = sys.argv; sys.argv = ['x', 'none']
exec(open('/work/main/docs/results/2026-12-02b/scripts/sasslite.py').read(), g)
sys.argv = argv
rows = []
r = csv.reader(open(sys.argv[1]))
hdr = None
for rec in r:
    if hdr is None:
        if 'Address' in rec: hdr = rec
        continue
    if len(rec) != len(hdr): continue
    try: rows.append((int(rec[hdr.index('Address')], 16), rec[hdr.index('Source')].strip(),
                      int(rec[hdr.index('Warp Stall Sampling (All Samples)')]), int(rec[hdr.index('Instructions Executed')])))
    except ValueError: pass
base = rows[0][0]
text = g['text'](sys.argv[2])
print('# ncu instructions', len(rows), 'cubin instructions', len(text) // 16)
lines = g['line_rows'](sys.argv[2]); addrs = [x[0] for x in lines]
tot_s = sum(x[2] for x in rows) or 1; tot_e = sum(x[3] for x in rows) or 1
by = collections.defaultdict(lambda: [0, 0, 0])
for a, src, smp, ex in rows:
    k = bisect.bisect_right(addrs, a - base) - 1
    key = '%s:%d' % (lines[k][1].split('/')[-1], lines[k][2]) if k >= 0 else '?'
    by[key][0] += smp; by[key][1] += ex; by[key][2] += 1
print('# samples', tot_s, 'executed', tot_e)
for key, (s, e, n) in sorted(by.items(), key=lambda kv: -kv[1][0])[:int(sys.argv[3]) if len(sys.argv) > 3 else 40]:
    print('%-32s samples %5.1f%% (%7d)  executed %5.1f%% (%9d)  instructions %d' % (key, 100 * s / tot_s, s, 100 * e / tot_e, e, n))
