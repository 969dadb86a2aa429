#!/usr/bin/env bash
# The whole device run when device time is short (one call, LIMIT_S seconds, default 420): builds
# only what it runs, then, most important first, each step with a time limit so the run ends in
# time and a step that runs out says so:
#   device codec tests (bit-exact with the host: every coder, every dtype; zero_run tiles),
#   ncclz-perf on 4 emulated ranks at 256 MiB: allreduce REL 1e-3 with Adaptive and FixedLength
#     (one part, and two and four parts overlapping coding with transfers), bf16 rows, fp16/bf16/fp32 rows on
#     generated gradients,
#     FixedRate<8> and <4>,
#   the collectives tests (Adaptive included) on 4 ranks, the lossless cluster test on 3 ranks
#     (with ./prebuilt: those, peer failure, the perf smoke tests and the examples),
#   the codec bench on the real fields (fixed_length, huffman, zero_run, adaptive; 64 MiB inputs),
#   real PyTorch gradients and their lossless ratio (fixed_length, adaptive).
# scripts/device_run.sh is the full run (every test on 2-4 ranks, full sweeps). With ./prebuilt
# carried (scripts/pack_prebuilt.sh), nothing is built here.
#   run(command="bash scripts/device_run_lean.sh", carry=[".deps", "data"])
set -uo pipefail
out=${OUT:-$PWD/device-out}
logs=$out/logs
mkdir -p "$logs"
default_limit=420
# shellcheck source=scripts/timed_steps.sh
source "$(dirname "$0")/timed_steps.sh"
finish() {
  tar -czf "$out/results.tgz" -C "$out" logs 2>/dev/null && rm -rf "$logs"
  echo "=== total $((SECONDS - start)) s"
}
trap finish EXIT

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader >"$logs/gpu.txt" 2>&1
build=build-device
grads=/tmp/ncclz-grads
if [ -f prebuilt/tests.tsv ]; then
  build=prebuilt  # built on the CPU machine (scripts/pack_prebuilt.sh) and carried: no build here
  export LD_LIBRARY_PATH="$PWD/prebuilt/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  echo "=== prebuilt: $(tr '\n' ' ' <prebuilt/commit)" | tee -a "$logs/summary.txt"
else
  if [ ! -f "$build/build.ninja" ]; then
    step setup 40 meson setup "$build" -Dcatch2_dir="$PWD/.deps" -Dgpu_arch=sm_90 --buildtype=release || exit 1
  fi
  step build 240 ninja -C "$build" -j16 test/gpu_tests benchmarks/ncclz-perf test/cluster/test_collectives \
    test/cluster/test_lossless benchmarks/ncclz-codec-bench || { tail -40 "$logs/build.log"; }
fi

data_args=()
[ -d data ] && data_args=(--data data)
perf() { # NAME ARGS... (the real fields)
  local name=$1
  shift
  step "$name" 40 scripts/emulated_cluster.sh -n 4 --timeout 60 -- "$PWD/$build/benchmarks/ncclz-perf" "${data_args[@]}" \
    -C allreduce -b 256M -e 256M --json "$logs/$name.jsonl" "$@"
}
perf_gradient() { # NAME ARGS... (generated gradients: fp16 holds their sums, it does not hold the fields')
  local name=$1
  shift
  step "$name" 60 scripts/emulated_cluster.sh -n 4 --timeout 80 -- "$PWD/$build/benchmarks/ncclz-perf" --gen gradient \
    -C allreduce -b 256M -e 256M --json "$logs/$name.jsonl" "$@"
}
step gpu_tests 120 "$build/test/gpu_tests"
perf perf-adaptive --rel 1e-3 --coder adaptive
perf perf-adaptive-2parts --rel 1e-3 --coder adaptive --chunk 128M
perf perf-fixed --rel 1e-3 --coder fixed_length
perf perf-fixed-2parts --rel 1e-3 --coder fixed_length --chunk 128M
perf perf-adaptive-4parts --rel 1e-3 --coder adaptive --chunk 64M
perf perf-adaptive-phases --rel 1e-3 --coder adaptive --chunk 64M --phases
perf perf-adaptive-bf16 --rel 1e-3 --coder adaptive -d bfloat16
perf_gradient perf-gradient-adaptive-f16 --rel 1e-3 --coder adaptive -d half
perf_gradient perf-gradient-fixed-f16 --rel 1e-3 --coder fixed_length -d half
perf_gradient perf-gradient-adaptive-bf16 --rel 1e-3 --coder adaptive -d bfloat16
perf_gradient perf-gradient-adaptive --rel 1e-3 --coder adaptive
perf perf-fixed8 --quantizer fixed8
perf perf-fixed4 --quantizer fixed4
if [ "$build" = prebuilt ]; then
  step cluster_tests 150 env OUT="$logs" scripts/run_test_list.sh prebuilt 'collectives_4|lossless_3|peer_failure|perf_smoke|example|smoke_4'
else
  step collectives_4ranks 70 scripts/emulated_cluster.sh -n 4 --timeout 70 -- "$PWD/$build/test/cluster/test_collectives"
  step lossless_3ranks 40 scripts/emulated_cluster.sh -n 3 --timeout 40 -- "$PWD/$build/test/cluster/test_lossless"
fi
step codec_bench 90 "$build/benchmarks/ncclz-codec-bench" "${data_args[@]}" --bounds 1e-3,1e-4 --coders fixed_length,huffman,zero_run,adaptive \
  --runs 5 --size-mb 64 --json "$logs/codec.json"
# Gradients last: PyTorch on the GPU and CPUs would disturb the timed rows above.
step make_gradients 150 python3 tools/make_gradients.py "$grads" --steps 20
step lossless_bench 30 "$build/benchmarks/ncclz-codec-bench" --lossless "$grads" --coders fixed_length,adaptive --runs 5

echo "=== summary"
cat "$logs/summary.txt"
for f in "$logs"/perf-*.log; do echo "-- $(basename "$f")"; grep -E "^ +[0-9]+ +[0-9]+ |Out of bounds" "$f"; done
grep -h -E "passed|failed|FAILED" "$logs/gpu_tests.log" | tail -3
tail -3 "$logs/collectives_4ranks.log" "$logs/lossless_3ranks.log" 2>/dev/null
tail -1 "$logs/cluster_tests.log" 2>/dev/null
grep -E "^concat|^smooth |^noise |OK:|FAILED" "$logs/codec_bench.log" | head -40
grep -E "^all |OK|FAILED" "$logs/lossless_bench.log" | head -10
