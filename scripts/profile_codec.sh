#!/usr/bin/env bash
# Nsight Compute profile of the codec kernels on the GPU machine: one encode and one decode launch
# of the 64 MiB inputs of ncclz-codec-bench, with CODERS (default huffman), BOUNDS (default 1e-3)
# and PROFILE_ARGS (more bench arguments, e.g. "--data data --only concat"). Reports and the
# source-level CSV go to
# $OUT/prof.tgz; the headline metrics are printed. Clocks are left alone (--clock-control none).
#   run(command="bash scripts/profile_codec.sh", carry=[".deps", "prebuilt"])
set -uo pipefail
out=${OUT:-/tmp/out}
mkdir -p "$out"
coders=${CODERS:-huffman}
if [ -f prebuilt/tests.tsv ]; then
  B=prebuilt/benchmarks/ncclz-codec-bench
  export LD_LIBRARY_PATH="$PWD/prebuilt/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
else
  bash scripts/device_targets.sh benchmarks/ncclz-codec-bench true || exit 1
  B=build-device/benchmarks/ncclz-codec-bench
fi
NCU="ncu --clock-control none --section SpeedOfLight --section Occupancy --section WarpStateStats --section SourceCounters --section LaunchStats"
for k in enc dec; do
  [ $k = enc ] && { regex=encode_kernel; skip=4; } || { regex=decode_kernel; skip=0; }
  $NCU -k "regex:$regex" --launch-skip $skip --launch-count 1 -o "$out/$k" $B ${PROFILE_ARGS:-} --bounds "${BOUNDS:-1e-3}" \
    --coders "$coders" --runs 1 --size-mb 64 >"$out/${k}_run.txt" 2>&1
  ncu -i "$out/$k.ncu-rep" --page details >"$out/${k}_details.txt" 2>&1
  # Per-instruction samples with their CUDA lines (needs -lineinfo, which meson.build sets).
  ncu -i "$out/$k.ncu-rep" --page source --csv --print-source cuda,sass >"$out/${k}_source.csv" 2>&1 ||
    ncu -i "$out/$k.ncu-rep" --page source --csv --print-source sass >"$out/${k}_source.csv" 2>&1
done
for k in enc dec; do
  echo "=== $k"
  grep -E "Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Block Limit|Warp Cycles Per Issued|Issued Ipc|Memory Throughput|Compute \(SM\)|Shared Memory Configuration Size|Dynamic Shared|Static Shared" "$out/${k}_details.txt" | head -24
  grep -E "^ *(Stall|stall)|OPT|Est\. Speedup" "$out/${k}_details.txt" | head -12
done
cd "$out" && tar czf /tmp/prof.tgz . && rm -rf ./* && mv /tmp/prof.tgz .
