#!/usr/bin/env bash
# Session 16: Adaptive's overhead over the coder it picks, 29e8457's codec bench, 3 rounds, seed 7.
set -uo pipefail
tar xJf xr14/final/prebuilt.tar.xz && tar xJf xr11/pack/data.tar.xz
export LD_LIBRARY_PATH="$PWD/prebuilt/lib"
mkdir -p "$OUT/logs"; start=$SECONDS
for round in 1 2 3; do
  [ $((SECONDS - start)) -gt 200 ] && break
  for only in smooth noise; do
    timeout 60 prebuilt/benchmarks/ncclz-codec-bench --data data --only $only --bounds 1e-3,1e-4 --coders fixed_length,huffman,zero_run,adaptive --runs 7 --size-mb 64 --seed 7 --dtype f32 > "$OUT/logs/$only-$round.log" 2>&1
    grep -E "^(smooth|noise) " "$OUT/logs/$only-$round.log" | awk -v r=$round '{print r, $0}' >> "$OUT/table.txt"
    grep -E "^(OK|FAILED)" "$OUT/logs/$only-$round.log" >> "$OUT/status.txt"
  done
done
cd "$OUT/logs" && tar czf ../logs.tgz . && cd .. && rm -rf logs
cat status.txt | sort | uniq -c
python3 - table.txt <<'PY'
import sys, statistics as st, collections as c
comp=c.defaultdict(list); ab=c.defaultdict(list); tiles={}
for l in open(sys.argv[1]):
    f=l.split(); k=(f[1],f[2],f[4]); comp[k].append(float(f[6])); ab[k].append(float(f[10])); tiles[k]=f[-1]
for (name,coder,b) in sorted(comp):
    if coder!="adaptive": continue
    t=[int(x) for x in tiles[(name,coder,b)].split("/")]; pick=["raw","fixed_length","huffman","zero_run"][t.index(max(t))]
    m=lambda d,k: st.median(d[k])
    a,p=(name,coder,b),(name,pick,b)
    if p not in comp: continue
    print("%-7s %s picks %-12s adaptive %6.1f %-12s %6.1f time +%4.1f%% | abs %6.1f vs %6.1f +%4.1f%%  (%s | %s)"%(name,b,pick,m(comp,a),pick,m(comp,p),100*(m(comp,p)/m(comp,a)-1),m(ab,a),m(ab,p),100*(m(ab,p)/m(ab,a)-1)," ".join(map(str,comp[a]))," ".join(map(str,comp[p]))))
PY
