#!/usr/bin/env bash
# Packs the executables of a build made on this (CPU) machine into ./prebuilt, so that a device
# run skips its own four-minute build: the device scripts use ./prebuilt when it is carried.
#   scripts/pack_prebuilt.sh [--no-build] [BUILD_DIR]   (default build-me, configured with -Dgpu_arch=sm_90;
#                                                        --no-build packs what is built, and stops at an
#                                                        executable older than the newest header)
#   run(command="bash scripts/device_run.sh", carry=[".deps", "data", "prebuilt"])
# prebuilt/tests.tsv lists meson's tests (name, timeout, command) with the source and build folders
# written as @SRC@ and @BUILD@; scripts/run_test_list.sh runs them as `meson test` would.
# The host-only tests (host, compile_fail_*) stay out: CI runs them. libcudart comes along (the
# binaries link it dynamically); NCCL is the device machine's own.
set -euo pipefail
build_first=1
[ "${1:-}" = "--no-build" ] && { build_first=0; shift; }
build=${1:-build-me}
src=$PWD
dest=prebuilt
[ -f "$build/build.ninja" ] || { echo "pack_prebuilt: $build is not a meson build folder" >&2; exit 1; }
# The Debian meson of the CPU machine (1.0.1) gives nvcc no depfile flags, so ninja does not see a
# changed header in a .cu object: objects older than the newest header are removed to be rebuilt,
# and no executable older than it is packed (session 20 packed perf and cluster tests built from
# code five hours older than the GPU tests beside them).
newest_header=$(find include -type f -printf '%T@ %p\n' | sort -n | tail -1 | cut -d' ' -f2)
[ $build_first = 1 ] && find "$build" -name '*.cu.o' ! -newer "$newest_header" -delete
[ $build_first = 1 ] && ninja -C "$build" >/dev/null
rm -rf "$dest" && mkdir -p "$dest/lib"
build_abs=$(cd "$build" && pwd)
meson introspect "$build" --targets | python3 -c '
import json, os, sys
build = sys.argv[1]
for t in json.load(sys.stdin):
    if t["type"] == "executable" and t["name"] != "host_tests":
        for f in t["filename"]:
            print(os.path.relpath(f, build))' "$build_abs" | while read -r exe; do
  if [ ! "$build/$exe" -nt "$newest_header" ]; then
    echo "pack_prebuilt: $build/$exe is older than $newest_header (stale: run without --no-build)" >&2
    exit 1
  fi
  mkdir -p "$dest/$(dirname "$exe")" && cp "$build/$exe" "$dest/$exe" && strip --strip-unneeded "$dest/$exe"
done
meson introspect "$build" --tests | python3 -c '
import json, sys
src, build = sys.argv[1], sys.argv[2]
for t in json.load(sys.stdin):
    if t["name"] == "host" or t["name"].startswith("compile_fail"):
        continue
    cmd = [a.replace(build, "@BUILD@").replace(src, "@SRC@") for a in t["cmd"]]
    print("\t".join([t["name"], str(t["timeout"])] + cmd))' "$src" "$build_abs" >"$dest/tests.tsv"
cudart=$(ldd "$dest/test/gpu_tests" | awk '/libcudart/ {print $3}')
[ -n "$cudart" ] && cp "$cudart" "$dest/lib/"
git rev-parse --short HEAD >"$dest/commit"
git diff --quiet HEAD || echo "(with uncommitted changes)" >>"$dest/commit"
du -sh "$dest"
