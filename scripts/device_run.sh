#!/usr/bin/env bash
# The whole GPU-machine run in one call: build, GPU and multi-rank tests, the codec benchmark and
# the collectives benchmark on the emulated cluster; short tables last.
#
# On this (CPU) machine, once:   tools/make_datasets.sh data
#                                mkdir -p .deps/catch2 && cp /usr/include/catch2/catch.hpp .deps/catch2/
# Then through the device tool:  run(command="bash scripts/device_run.sh", carry=[".deps", "data"])
# Logs go to $OUT (the device tool's folder) or ./device-out.
set -uo pipefail
out=${OUT:-$PWD/device-out}
mkdir -p "$out"
quick=0
[ "${1:-}" = "--quick" ] && quick=1

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv,noheader | tee "$out/gpu.txt"
nvcc --version | tail -1

build=build-device
if [ ! -f "$build/build.ninja" ]; then
  meson setup "$build" -Dcatch2_dir="$PWD/.deps" -Dgpu_arch=sm_90 --buildtype=release >"$out/setup.log" 2>&1 ||
    { cat "$out/setup.log"; exit 1; }
fi
ninja -C "$build" >"$out/build.log" 2>&1 || { tail -50 "$out/build.log"; exit 1; }

meson test -C "$build" --print-errorlogs >"$out/test.log" 2>&1
test_rc=$?
cp "$build/meson-logs/testlog.txt" "$out/testlog.txt" 2>/dev/null

bench_args=(--json "$out/codec.json")
[ -d data ] && bench_args+=(--data data)
[ $quick = 1 ] && bench_args+=(--quick)
"$build/benchmarks/ncclz-codec-bench" "${bench_args[@]}" >"$out/bench.log" 2>&1
bench_rc=$?

# Collectives against NCCL on the emulated cluster: 4 ranks on this GPU, sockets, MPS.
coll_args=()
[ -d data ] && coll_args+=(--data data)
[ $quick = 1 ] && coll_args+=(--max-bytes 16777216)
scripts/emulated_cluster.sh -n 4 --timeout 500 -- "$PWD/$build/benchmarks/ncclz-collectives-bench" "${coll_args[@]}" \
  >"$out/collectives.log" 2>&1
coll_rc=$?

echo "=== tests (rc=$test_rc)"
grep -E "^ *[0-9]+/[0-9]+ |^(Ok|Fail|Skipped|Expected|Unexpected|Timeout):" "$out/test.log"
echo "=== codec benchmark (rc=$bench_rc)"
tail -60 "$out/bench.log"
echo "=== collectives on the emulated cluster (rc=$coll_rc)"
grep -v "^\[" "$out/collectives.log" | tail -40
exit $(( test_rc != 0 || bench_rc != 0 || coll_rc != 0 ))
