import collections, sys
rows=collections.defaultdict(list)
order=sys.argv[2].split(',')
for line in open(sys.argv[1]):
    f=line.split()
    v,inp,coder,mib,bound,ratio,enc,_,dec,_,ab=f[:11]
    if inp not in ('concat','smooth','noise'): continue
    rows[(inp,bound,coder)].append((v,float(ratio),float(enc),float(dec),float(ab),f[-1]))
for k in sorted(rows):
    print(k)
    for v in order:
        r=[x for x in rows[k] if x[0]==v]
        if not r: continue
        print("   %-10s ratio %6.2f enc %6.0f-%-6.0f dec %6.0f-%-6.0f abs %6.0f-%-6.0f tiles %s"%(v,r[0][1],min(x[2] for x in r),max(x[2] for x in r),min(x[3] for x in r),max(x[3] for x in r),min(x[4] for x in r),max(x[4] for x in r),r[0][5]))
