import csv, sys
rows=[]
r=csv.reader(open(sys.argv[1]))
next(r); hdr=next(r)
ia=hdr.index("Address"); isrc=hdr.index("Source"); iss=hdr.index("Warp Stall Sampling (All Samples)"); iex=hdr.index("Instructions Executed")
for rec in r:
    if len(rec)!=len(hdr): continue
    rows.append((int(rec[ia],16), rec[isrc].strip(), int(rec[iss]), int(rec[iex])))
base=rows[0][0]
tot=sum(x[2] for x in rows); itot=sum(x[3] for x in rows)
print("instructions", len(rows), "samples", tot, "executed", itot)
# regions: split at BAR.SYNC instructions
reg=[]; cur=[]
for x in rows:
    cur.append(x)
    if x[1].startswith("BAR") or "BAR.SYNC" in x[1]:
        reg.append(cur); cur=[]
reg.append(cur)
print("region start..end  samples%  exec%  notable")
for g in reg:
    s=sum(x[2] for x in g); e=sum(x[3] for x in g)
    if s/tot<0.01 and e/itot<0.01: continue
    ops={}
    for x in g:
        op=x[1].split()[0] if x[1] else ""
        if op.startswith("@"): op=x[1].split()[1]
        k=op.split(".")[0]
        if k in ("MATCH","ATOMS","ATOM","RED","SHFL","LDS","STS","LDG","STG","VOTE","POPC","FLO","BREV","WARPSYNC","I2F","F2I","BSSY","BRA","LDGSTS"): ops[k]=ops.get(k,0)+1
    print(f"{g[0][0]-base:6x}..{g[-1][0]-base:6x} {100*s/tot:6.1f} {100*e/itot:6.1f}  n={len(g)} {ops} | {g[-1][1][:40]}")
print("top instructions")
for x in sorted(rows,key=lambda x:-x[2])[:30]:
    print(f"{x[0]-base:6x} {100*x[2]/tot:5.1f}% {x[1][:70]}")
