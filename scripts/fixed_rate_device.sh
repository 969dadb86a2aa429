#!/usr/bin/env bash
# The FixedRate checks on the GPU machine, in one call: the device codec against the host reference
# (gpu_tests "[fixed_rate]"), the FixedRate collectives on the 4-rank emulated cluster
# (test_collectives with NCCLZ_FIXED_RATE_ONLY=1), ncclz-perf rows for fixed8 / fixed4 / rel, then,
# with the time left, the other GPU tests and the whole collectives test as a regression check.
#
#   run(command="cd .wt/fixed-rate && bash scripts/fixed_rate_device.sh", carry=[".wt/fixed-rate", ".deps"])
#
# Uses binaries built on the CPU machine in build-bin/ (gpu_tests, test_collectives, ncclz-perf,
# libcudart.so.13) when they start there; otherwise builds those targets (minutes). Logs go to $OUT.
# --lean: only the FixedRate GPU tests and the FixedRate collectives (about 40 s).
set -uo pipefail
lean=0
[ "${1:-}" = "--lean" ] && lean=1
out=${OUT:-$PWD/device-out}
mkdir -p "$out"
start=$(date +%s)
left() { echo $((${BUDGET:-170} - ($(date +%s) - start))); }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/gpu.txt"

bin=build-bin
for d in /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/lib/x86_64-linux-gnu; do
  [ -d "$d" ] && LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$d"
done
export LD_LIBRARY_PATH="$PWD/$bin:$LD_LIBRARY_PATH"
# (Catch2's --list-tests exits with the number of tests: ldd is the check.)
if [ ! -x "$bin/gpu_tests" ] || ldd "$bin/gpu_tests" "$bin/test_collectives" "$bin/ncclz-perf" 2>"$out/prebuilt.err" | grep -q "not found"; then
  echo "prebuilt binaries do not start here ($(head -c 300 "$out/prebuilt.err")); building"
  ldd "$bin/test_collectives" >>"$out/prebuilt.err" 2>&1
  meson setup /tmp/b -Dcatch2_dir="$PWD/../../.deps" -Dgpu_arch=sm_90 --buildtype=release >"$out/setup.log" 2>&1 || { tail -20 "$out/setup.log"; exit 1; }
  ninja -C /tmp/b test/gpu_tests test/cluster/test_collectives benchmarks/ncclz-perf >"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
  mkdir -p /tmp/bin && cp /tmp/b/test/gpu_tests /tmp/b/test/cluster/test_collectives /tmp/b/benchmarks/ncclz-perf /tmp/bin/
  bin=/tmp/bin
fi
bin=$(cd "$bin" && pwd)

echo "== gpu_tests [fixed_rate] ($(left) s left)"
timeout $([ $lean = 1 ] && echo 25 || echo 60) "$bin/gpu_tests" "[fixed_rate]" >"$out/gpu_fixed_rate.log" 2>&1
echo "rc=$?"; tail -4 "$out/gpu_fixed_rate.log"

echo "== test_collectives, FixedRate only, 4 ranks ($(left) s left)"
NCCLZ_FIXED_RATE_ONLY=1 scripts/emulated_cluster.sh -n 4 --timeout $([ $lean = 1 ] && echo 30 || echo 70) --log-dir "$out/cluster_fr" -- "$bin/test_collectives" \
  >"$out/cluster_fixed_rate.log" 2>&1
echo "rc=$?"; grep -v "^NCCL\|^ *$" "$out/cluster_fixed_rate.log" | tail -40

[ $lean = 1 ] && { echo "done in $(($(date +%s) - start)) s"; exit 0; }

perf() { # NAME ARGS
  local name=$1; shift
  [ "$(left)" -lt 25 ] && { echo "skip perf $name: out of time"; return; }
  scripts/emulated_cluster.sh -n 4 --timeout 25 -- "$bin/ncclz-perf" -b 16M -e 64M -n 5 -w 2 --fallback-below 0 \
    -C allreduce,reduce_scatter,allgather --json "$out/perf-$name.jsonl" "$@" >"$out/perf-$name.log" 2>&1
  echo "== perf $name rc=$?"; grep -v "^NCCL" "$out/perf-$name.log" | tail -14
}
perf fixed8 --quantizer fixed8
perf fixed4 --quantizer fixed4
perf rel1e-2 --rel 1e-2

if [ "$(left)" -gt 20 ]; then
  echo "== gpu_tests all but [large] ($(left) s left)"
  timeout $(($(left) - 12)) "$bin/gpu_tests" "~[large]" >"$out/gpu_all.log" 2>&1
  echo "rc=$?"; tail -4 "$out/gpu_all.log"
fi
echo "done in $(($(date +%s) - start)) s"
