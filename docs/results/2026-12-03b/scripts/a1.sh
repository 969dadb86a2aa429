#!/usr/bin/env bash
# Session 17, call 1: GPU tests of gz (gate sums + zero counts by lane-per-warp loads and one warp
# reduction) and all (also place_block); the codec bench of base (HEAD code), gz and all, three
# rounds alternating, 64 MiB f32, Adaptive and the coders it picks.
set -uo pipefail
A=xr15/a1
tar xJf xr11/pack/data.tar.xz
tar xJf $A/bins.tar.xz -C $A
mkdir -p "$OUT/logs"
start=$SECONDS
for v in gz all; do
  timeout 150 $A/gpu_tests-$v > "$OUT/logs/gpu_tests-$v.log" 2>&1
  echo "gpu_tests $v rc=$? $(tail -3 "$OUT/logs/gpu_tests-$v.log" | tr '\n' ' ') at $((SECONDS - start)) s" >> "$OUT/status.txt"
done
one() {  # variant input coders round bounds
  timeout 60 "$A/codec-$1" --data data --only $2 --bounds $5 --coders $3 --runs 7 --size-mb 64 --seed 7 --dtype f32 >"$OUT/logs/codec-$1-$2-$4.log" 2>&1
  echo "$1 $2 $4 rc=$? $(grep -E '^(OK|FAILED):' "$OUT/logs/codec-$1-$2-$4.log") at $((SECONDS - start)) s" >> "$OUT/status.txt"
  grep -E "^(concat|smooth|noise)" "$OUT/logs/codec-$1-$2-$4.log" | sed 's/concat(13 fields, tiled)x[0-9.]*/concat/' | awk -v w="$1" -v r="$4" '{print w, r, $0}' >> "$OUT/table.txt"
}
for round in 1 2 3 4; do
  [ $((SECONDS - start)) -gt 400 ] && break
  for v in base gz all; do
    one $v smooth fixed_length,zero_run,huffman,adaptive $round 1e-3,1e-4
    one $v noise huffman,fixed_length,adaptive $round 1e-3,1e-4
    one $v concat huffman,adaptive $round 1e-3,1e-4
  done
done
echo "bench done at $((SECONDS - start)) s" >> "$OUT/status.txt"
cd "$OUT/logs" && tar czf ../logs.tgz . && cd .. && rm -rf logs
cat status.txt | grep -v "rc=0 OK" | head
awk '$4 != "raw" {k=$3" "$4" "$6; c[k" "$1]=c[k" "$1]" "$8; keys[k]=1} END{for (k in keys) print k, "|", c[k" base"], "|", c[k" gz"], "|", c[k" all"]}' table.txt | sort | python3 -c '
import sys,statistics as s
for l in sys.stdin:
    k,b,j,o=l.split("|"); m=[s.median([float(x) for x in v.split()]) for v in (b,j,o)]
    print("%-28s base %6.1f gz %6.1f (%+5.1f%%) all %6.1f (%+5.1f%%)  [%s| %s| %s]" % (k.strip(), m[0], m[1], 100*(m[1]/m[0]-1), m[2], 100*(m[2]/m[0]-1), b.strip(), j.strip(), o.strip()))'
