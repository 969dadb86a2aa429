#!/usr/bin/env bash
# expect_first_nvcc_error.sh NVCC INCLUDE_DIR SOURCE EXPECTED_TEXT [NVCC_ARGS...]
# Passes when SOURCE fails to compile with NVCC_ARGS and the first error nvcc reports contains
# EXPECTED_TEXT: the message that names the cause must come before any error it would set off.
set -u
nvcc=$1 inc=$2 src=$3 expected=$4
shift 4
obj=$(mktemp --suffix=.o)
trap 'rm -f "$obj"' EXIT
out=$("$nvcc" "$@" -I"$inc" -c "$src" -o "$obj" 2>&1)
if [ $? -eq 0 ]; then
  echo "FAIL: $src compiled with $*, but it must not"
  exit 1
fi
first=$(grep -m1 -i 'error' <<<"$out")
if ! grep -qF -- "$expected" <<<"$first"; then
  echo "FAIL: the first error for $src with $* lacks: $expected"
  echo "$out" | head -40
  exit 1
fi
echo "ok: $src with $* is rejected first with: $first"
