#!/usr/bin/env bash
# The zero_run device coder's GPU tests alone (test/gpu/test_zero_run_tile.cu, part of gpu_tests):
# builds only their objects (not the rest of gpu_tests), links them and runs them; a short summary
# last. Arguments go to the Catch2 runner (e.g. "[perf]"). From the main checkout, through the device tool:
#   run(command="cd .wt/zero-run && bash scripts/zero_run_gpu.sh", carry=[".wt/zero-run", ".deps"])
set -uo pipefail
out=${OUT:-$PWD/device-out}
mkdir -p "$out"
build=/tmp/b-zero-run  # not /tmp/b: a warm device machine may hold another checkout's build there
deps=$PWD/../../.deps
[ -d "$deps" ] || deps=$PWD/.deps
if ! grep -qs "$PWD" "$build/build.ninja"; then
  rm -rf "$build"
  meson setup "$build" -Dcatch2_dir="$deps" -Dgpu_arch=sm_90 --buildtype=release >"$out/setup.log" 2>&1 ||
    { tail -30 "$out/setup.log"; exit 1; }
fi
objs="test/gpu_tests.p/gpu_main.cu.o test/gpu_tests.p/gpu_test_zero_run_tile.cu.o"
start=$(date +%s)
ninja -C "$build" $objs >"$out/build.log" 2>&1 ||
  { grep -v "instantiation of\|detected during" "$out/build.log" | tail -40; exit 1; }
(cd "$build" && nvcc -o zr_gpu_tests $objs -gencode arch=compute_90,code=sm_90 -lcudart) >>"$out/build.log" 2>&1 ||
  { tail -20 "$out/build.log"; exit 1; }
echo "build: $(( $(date +%s) - start )) s"
timeout 110 "$build/zr_gpu_tests" "$@" >"$out/test.log" 2>&1
rc=$?
grep -v "^\s*$" "$out/test.log" | tail -60
echo "zero_run GPU tests: exit $rc ($( [ $rc = 124 ] && echo 'TIMED OUT' || echo done))"
exit $rc
