#!/usr/bin/env bash
# The whole GPU-machine run in one call: build, GPU and multi-rank tests, the codec benchmark and
# ncclz-perf on the 4-rank emulated cluster (every collective at REL 1e-3; allreduce at REL 1e-2 with
# its phases timed; allreduce, reduce_scatter and allgather with the Adaptive coder; real data when
# ./data exists); short tables last. The codec bench runs FixedLength, Huffman and Adaptive.
# --quick stops the sweeps at 16 MiB.
#
# On this (CPU) machine, once:   tools/make_datasets.sh data
#                                mkdir -p .deps/catch2 && cp /usr/include/catch2/catch.hpp .deps/catch2/
# Then through the device tool:  run(command="bash scripts/device_run.sh", carry=[".deps", "data"])
# or, to skip the build there:   scripts/pack_prebuilt.sh build-me, and carry "prebuilt" too
# Logs go to $OUT (the device tool's folder) or ./device-out.
set -uo pipefail
out=${OUT:-$PWD/device-out}
mkdir -p "$out"
quick=0
[ "${1:-}" = "--quick" ] && quick=1

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv,noheader | tee "$out/gpu.txt"
nvcc --version | tail -1

build="build-device"
if [ -f prebuilt/tests.tsv ]; then
  # Built on the CPU machine (scripts/pack_prebuilt.sh) and carried: no build here.
  build=prebuilt
  export LD_LIBRARY_PATH="$PWD/prebuilt/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  echo "prebuilt: $(tr '\n' ' ' <prebuilt/commit)"
  scripts/run_test_list.sh prebuilt >"$out/test.log" 2>&1
  test_rc=$?
else
  if [ ! -f "$build/build.ninja" ]; then
    meson setup "$build" -Dcatch2_dir="$PWD/.deps" -Dgpu_arch=sm_90 --buildtype=release >"$out/setup.log" 2>&1 ||
      { cat "$out/setup.log"; exit 1; }
  fi
  ninja -C "$build" >"$out/build.log" 2>&1 || { tail -50 "$out/build.log"; exit 1; }
  meson test -C "$build" --print-errorlogs >"$out/test.log" 2>&1
  test_rc=$?
  cp "$build/meson-logs/testlog.txt" "$out/testlog.txt" 2>/dev/null
fi

bench_args=(--json "$out/codec.json" --coders fixed_length,huffman,adaptive)
[ -d data ] && bench_args+=(--data data)
[ $quick = 1 ] && bench_args+=(--quick)
"$build/benchmarks/ncclz-codec-bench" "${bench_args[@]}" >"$out/bench.log" 2>&1
bench_rc=$?

# Collectives against NCCL on the emulated cluster: 4 ranks on this GPU, sockets, MPS. The default
# sweep (1 MiB .. 256 MiB, x4) takes about a minute per run.
perf_args=()
[ -d data ] && perf_args+=(--data data)
[ $quick = 1 ] && perf_args+=(-e 16M)
run_perf() { # NAME ARGS...: one ncclz-perf run: its table in $out/NAME.log, its JSON lines in $out/NAME.jsonl
  local name=$1
  shift
  scripts/emulated_cluster.sh -n 4 --timeout 300 -- "$PWD/$build/benchmarks/ncclz-perf" "${perf_args[@]}" \
    --json "$out/$name.jsonl" "$@" >"$out/$name.log" 2>&1
}
run_perf perf-rel1e-3 -C allreduce,reduce_scatter,allgather,broadcast,reduce,alltoall --rel 1e-3
perf_rc=$?
run_perf perf-rel1e-2 -C allreduce --rel 1e-2 --phases
perf_rc=$((perf_rc | $?))
run_perf perf-adaptive-rel1e-3 -C allreduce,reduce_scatter,allgather --rel 1e-3 --coder adaptive
perf_rc=$((perf_rc | $?))
if python3 -c 'import matplotlib' 2>/dev/null; then
  python3 benchmarks/plot_perf.py --out "$out" "$out"/perf-rel1e-3.jsonl "$out"/perf-rel1e-2.jsonl >"$out/plot.log" 2>&1
fi

echo "=== tests (rc=$test_rc)"
grep -E "^ *[0-9]+/[0-9]+ |^(Ok|Fail|Skipped|Expected|Unexpected|Timeout):| (OK|SKIP|FAIL|TIMEOUT)" "$out/test.log"
echo "=== codec benchmark (rc=$bench_rc)"
tail -60 "$out/bench.log"
echo "=== ncclz-perf on the emulated cluster, 4 ranks (rc=$perf_rc)"
for name in perf-rel1e-3 perf-rel1e-2 perf-adaptive-rel1e-3; do
  grep -v -e "^\[" -e "^emulated_cluster: MPS" "$out/$name.log" | tail -50
done
# The device tool brings back only a few files: everything goes back as one archive.
tar czf /tmp/device-results.tgz -C "$out" . && rm -rf "${out:?}"/* && mv /tmp/device-results.tgz "$out/results.tgz"
exit $(( test_rc != 0 || bench_rc != 0 || perf_rc != 0 ))
