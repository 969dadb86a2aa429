#!/usr/bin/env bash
# The lossless codec's GPU-machine run, in one call of about three minutes: builds only its
# targets, makes real gradients (tools/make_gradients.py, PyTorch on the GPU) while they build,
# then measures the lossless ratio of those gradients on the device (ncclz-codec-bench
# --lossless, bit-exact round trip checked) and with the host references for every candidate
# mapping (ncclz-lossless-study), runs the lossless cluster test on 2, 3 and 4 emulated ranks and
# the device codec's lossless tests. Logs go to $OUT (the device tool's folder) or ./device-out,
# tarred as lossless-run.tar.gz; the generated gradients stay on the machine.
#
#   run(command="cd .wt/lossless && bash scripts/lossless_run.sh", carry=[".wt/lossless", ".deps"])
#
# Every step has a time limit so the whole run ends inside the device tool's limit (LIMIT_S,
# default 170 s); a step that runs out says so in its log.
set -uo pipefail
out=${OUT:-$PWD/device-out}
mkdir -p "$out/logs"
logs=$out/logs
default_limit=170
# shellcheck source=scripts/timed_steps.sh
source "$(dirname "$0")/timed_steps.sh"
finish() {
  tar -czf "$out/lossless-run.tar.gz" -C "$out" logs 2>/dev/null
  echo "=== total $((SECONDS - start)) s"
}
trap finish EXIT

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader >"$logs/gpu.txt" 2>&1
build=/tmp/ncclz-lossless-build  # its own: a warm machine may hold other trees' builds
grads=/tmp/ncclz-lossless-grads
catch2=$(cd ../.. 2>/dev/null && pwd)/.deps
[ -f "$catch2/catch2/catch.hpp" ] || catch2=$PWD/.deps
if [ ! -f "$build/build.ninja" ]; then
  step setup 40 meson setup "$build" -Dcatch2_dir="$catch2" -Dgpu_arch=sm_90 --buildtype=release || {
    tail -30 "$logs/setup.log"
    exit 1
  }
fi
# Gradients on the GPU while the CPU compiles.
(timeout 120 python3 tools/make_gradients.py "$grads" --steps 20 >"$logs/make_gradients.log" 2>&1; echo "rc=$?" >>"$logs/make_gradients.log") &
grad_pid=$!
step build 110 ninja -C "$build" -j16 test/cluster/test_lossless benchmarks/ncclz-codec-bench benchmarks/ncclz-lossless-study \
  test/cluster/test_collectives
build_rc=$?
# The device codec tests are the longest compile: built behind the runs below, run last if in time.
gpu_limit=$(($(left) - 30))
[ $gpu_limit -lt 10 ] && gpu_limit=10
(timeout $gpu_limit ninja -C "$build" -j8 test/gpu_tests >"$logs/build_gpu_tests.log" 2>&1; echo "rc=$?" >>"$logs/build_gpu_tests.log") &
gpu_build_pid=$!
wait $grad_pid
cat "$logs/make_gradients.log"
ls -l "$grads" >>"$logs/make_gradients.log" 2>&1
[ $build_rc = 0 ] || { tail -40 "$logs/build.log"; exit 1; }

if ls "$grads"/*.f32 >/dev/null 2>&1; then
  step codec_bench 30 "$build/benchmarks/ncclz-codec-bench" --lossless "$grads" --runs 10
  cat "$logs/codec_bench.log"
  step study 40 "$build/benchmarks/ncclz-lossless-study" "$grads"/*.f32 "$grads"/*.bf16
  cat "$logs/study.log"
fi
for n in 2 4 3; do
  step "cluster_${n}ranks" 45 scripts/emulated_cluster.sh -n $n --timeout 40 -- "$build/test/cluster/test_lossless"
  grep -E "test_lossless|FAILED" "$logs/cluster_${n}ranks.log" | head -20
done
wait $gpu_build_pid
tail -3 "$logs/build_gpu_tests.log"
if [ -x "$build/test/gpu_tests" ]; then
  step gpu_tests 30 "$build/test/gpu_tests" "[lossless]"
  tail -5 "$logs/gpu_tests.log"
fi
# The other codecs' collectives, unchanged by the lossless path: if there is time left.
step collectives_2ranks 60 scripts/emulated_cluster.sh -n 2 --timeout 55 -- "$build/test/cluster/test_collectives"
tail -3 "$logs/collectives_2ranks.log"
cat "$logs/summary.txt"
