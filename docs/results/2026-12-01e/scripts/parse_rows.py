import csv, sys
r=csv.reader(open(sys.argv[1])); next(r); hdr=next(r)
rows=[rec for rec in r if len(rec)==len(hdr)]
ia=hdr.index("Address"); iex=hdr.index("Instructions Executed")
# the hottest region by executed instructions between barriers
regs=[]; cur=[]
for x in rows:
    cur.append(x)
    if "BAR.SYNC" in x[hdr.index("Source")]: regs.append(cur); cur=[]
regs.append(cur)
best=max(regs,key=lambda g: sum(int(x[iex]) for x in g))
keep=[i for i,h in enumerate(hdr) if h in ("Address","Source","Warp Stall Sampling (All Samples)","Warp Stall Sampling (Not-issued Samples)","Instructions Executed") or h.startswith("stall_") or "Stall" in h]
w=csv.writer(sys.stdout)
w.writerow([hdr[i] for i in range(len(hdr))])
for x in best: w.writerow(x)
