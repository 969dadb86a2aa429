#!/usr/bin/env bash
# check_header_deps.sh NINJA BUILD_ROOT PROBE_HEADER PROBE_OBJECT
# Header edits rebuild CUDA objects:
#  1. PROBE_OBJECT is up to date; once PROBE_HEADER (a copy in the build directory that it
#     includes) is newer than it, a dry run of ninja must want to compile PROBE_OBJECT again.
#     The header's time is put back afterwards.
#  2. Every CUDA object of the build must have header dependencies in ninja's log: one without
#     them would not be rebuilt after a header edit (meson.build's nvcc_depfile says why).
set -u
ninja=$1 root=$2 header=$3 object=$4
fail=0

# 1. The probe.
if ! plan=$("$ninja" -C "$root" -n "$object" 2>&1); then
  echo "FAIL: ninja -n $object: $plan"
  exit 1
fi
if ! grep -q "no work to do" <<<"$plan"; then
  echo "FAIL: $object is not up to date before the header is touched; build first. ninja -n said:"
  echo "$plan"
  exit 1
fi
saved=$(mktemp)
trap 'touch -r "$saved" "$header"; rm -f "$saved"' EXIT
touch -r "$header" "$saved"
touch -d "@$(($(stat -c %Y "$root/$object") + 2))" "$header"
plan=$("$ninja" -C "$root" -n "$object" 2>&1)
if grep -qF "$object" <<<"$plan"; then
  echo "ok: after $(basename "$header") was touched, ninja would compile $object again"
else
  echo "FAIL: after $(basename "$header") was touched, ninja would not compile $object again. ninja -n said:"
  echo "$plan"
  fail=1
fi

# 2. Every CUDA object.
objects=$("$ninja" -C "$root" -t targets all | sed -n 's/^\(.*\.cu\.o\): cuda_COMPILER$/\1/p')
if [ -z "$objects" ]; then
  echo "FAIL: no CUDA object in $root/build.ninja"
  exit 1
fi
count=0
for obj in $objects; do
  count=$((count + 1))
  # ninja -t deps: "<object>: #deps N, deps mtime T (VALID)", then one line per dependency, the
  # source first. Headers are the lines after it.
  deps=$("$ninja" -C "$root" -t deps "$obj")
  headers=$(sed -n '3,$p' <<<"$deps" | grep -cE '\.(h|hpp|cuh|hxx|inl)$')
  if [ "$headers" -eq 0 ]; then
    echo "FAIL: ninja records no header of $obj (not built yet, or nvcc wrote no depfile for it)"
    fail=1
  fi
done
[ "$fail" -eq 0 ] && echo "ok: all $count CUDA objects have their headers in ninja's dependency log"
exit "$fail"
