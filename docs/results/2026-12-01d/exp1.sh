#!/usr/bin/env bash
# Session 5, call 1: allreduce transfer variants; ncu of Adaptive on smooth 1e-4.
set -uo pipefail
export LD_LIBRARY_PATH="$PWD/prebuilt/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
B=prebuilt/benchmarks/ncclz-codec-bench
mkdir -p "$OUT/p"
timeout 60 $B --bounds 1e-3,1e-4 --coders fixed_length,huffman,zero_run,adaptive --runs 5 --size-mb 64 > "$OUT/p/codec.log" 2>&1
NCU="ncu --clock-control none --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SourceCounters"
prof() { # NAME REGEX CODER BOUND
  timeout 120 $NCU -k "regex:$2" --launch-skip 1 --launch-count 1 -o "/tmp/$1" $B --only smooth --bounds "$4" --coders "$3" --runs 1 --size-mb 64 >"/tmp/$1_run.txt" 2>&1
  ncu -i "/tmp/$1.ncu-rep" --page source --csv --print-source sass >"/tmp/$1_sass.csv" 2>&1
  ncu -i "/tmp/$1.ncu-rep" --page details >"$OUT/p/$1_details.txt" 2>&1
  { echo "== $1"; grep -E "Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Block Limit (Shared|Reg)|Dynamic Shared|Static Shared" "$OUT/p/$1_details.txt" | head -12; python3 xrun/sass_regions.py "/tmp/$1_sass.csv" | head -40; } >> "$OUT/p/regions.txt" 2>&1
}
prof enc-ad encode_kernel adaptive 1e-4
prof dec-ad decode_kernel adaptive 1e-4
prof enc-fl encode_kernel fixed_length 1e-4
prof dec-fl decode_kernel fixed_length 1e-4
tar czf "$OUT/prof.tgz" -C "$OUT" p && rm -rf "$OUT/p/"*_details.txt
LIMIT_S=300 VARIANTS='base||--coder adaptive --chunk 64M
prio|NCCLZ_PERF_HIGH_PRIORITY=1|--coder adaptive --chunk 64M
t4s2|NCCL_SOCKET_NTHREADS=4 NCCL_NSOCKS_PERTHREAD=2|--coder adaptive --chunk 64M
s4|NCCL_NSOCKS_PERTHREAD=4|--coder adaptive --chunk 64M
prio-phases|NCCLZ_PERF_HIGH_PRIORITY=1|--coder adaptive --chunk 64M --phases
base-phases||--coder adaptive --chunk 64M --phases
prio2|NCCLZ_PERF_HIGH_PRIORITY=1|--coder adaptive --chunk 64M
base2||--coder adaptive --chunk 64M' bash scripts/perf_env_sweep.sh
grep -E "^smooth|^noise" "$OUT/p/codec.log" | cut -c1-120
cat "$OUT/p/regions.txt" | grep -v "^ *[0-9a-f]* *[0-9.]*% " | head -120
