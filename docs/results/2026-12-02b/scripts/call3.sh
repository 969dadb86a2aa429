#!/usr/bin/env bash
# Session 8, call 3: ncu warp-state stalls (where Adaptive loses time against the coder it keeps):
# encode of smooth 1e-4 (Adaptive of base, nb4 and nozr; FixedLength of base) and noise 1e-4
# (Adaptive of base, nozr; Huffman of base). One launch each (the fifth encode).
set -uo pipefail
export LD_LIBRARY_PATH="$PWD/xr8/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p "$OUT/logs"
NCU="ncu --clock-control none --section WarpStateStats --section InstructionStats --section LaunchStats --section Occupancy --section MemoryWorkloadAnalysis"
one() {  # variant coder input bound
  $NCU -k regex:encode_kernel --launch-skip 4 --launch-count 1 -o "/tmp/$1-$2-$3-$4" "xr8/codec8-$1" --data data --only $3 --bounds $4 --coders $2 --runs 1 --size-mb 64 --seed 7 \
    > "$OUT/logs/run-$1-$2-$3-$4.txt" 2>&1
  echo "$1 $2 $3 $4 rc=$?" >> "$OUT/status.txt"
  ncu -i "/tmp/$1-$2-$3-$4.ncu-rep" --page details > "$OUT/logs/ncu-$1-$2-$3-$4.txt" 2>&1
  ncu -i "/tmp/$1-$2-$3-$4.ncu-rep" --page raw --csv 2>/dev/null | python3 -c "
import csv,sys
r=list(csv.reader(sys.stdin)); h,u,v=r[0],r[1],r[2]
for i,n in enumerate(h):
    if ('issue_stalled' in n and 'per_issue_active' in n) or n in ('gpu__time_duration.sum','smsp__inst_executed.sum','sm__warps_active.avg.pct_of_peak_sustained_active'):
        print(n, v[i])" > "$OUT/logs/raw-$1-$2-$3-$4.txt" 2>&1
}
one base adaptive smooth 1e-4; one nb4 adaptive smooth 1e-4; one nozr adaptive smooth 1e-4; one base fixed_length smooth 1e-4
one base adaptive noise 1e-4; one nozr adaptive noise 1e-4; one base huffman noise 1e-4
cd "$OUT/logs" && python3 - > "$OUT/summary.txt" <<'PY'
import glob
rows={}
for f in sorted(glob.glob('raw-*.txt')):
    d={}
    for l in open(f):
        p=l.split()
        if len(p)==2:
            try: d[p[0].replace('smsp__average_warps_issue_stalled_','').replace('_per_issue_active.ratio','')]=float(p[1].replace(',',''))
            except ValueError: pass
    rows[f[4:-4]]=d
keys=sorted({k for d in rows.values() for k in d}, key=lambda k: -max(d.get(k,0) for d in rows.values()))
print('%-50s'%'metric'+''.join('%16s'%n[:16] for n in rows))
for k in keys[:30]: print('%-50s'%k[:50]+''.join('%16.2f'%rows[n].get(k,0) for n in rows))
print(' '.join(rows))
PY
cat "$OUT/status.txt"
