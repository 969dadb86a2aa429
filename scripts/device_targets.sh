#!/usr/bin/env bash
# A short GPU-machine run: configure (once), build only the given ninja targets, then run one
# command; its output and the build log's tail come back. For iterating on one test or benchmark
# without the whole of scripts/device_run.sh.
#   run(command="bash scripts/device_targets.sh 'test/gpu_tests' build-device/test/gpu_tests '[huffman]'",
#       carry=[".deps"])
set -uo pipefail
targets=$1
shift
build="build-device"
if [ ! -f "$build/build.ninja" ]; then
  meson setup "$build" -Dcatch2_dir="$PWD/.deps" -Dgpu_arch=sm_90 --buildtype=release >/tmp/setup.log 2>&1 ||
    { cat /tmp/setup.log; exit 1; }
fi
# shellcheck disable=SC2086
ninja -C "$build" $targets >/tmp/build.log 2>&1 || { grep -E "error|Error" /tmp/build.log | head -40; tail -20 /tmp/build.log; exit 1; }
"$@"
