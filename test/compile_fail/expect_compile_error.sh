#!/usr/bin/env bash
# expect_compile_error.sh CXX INCLUDE_DIR SOURCE EXPECTED_TEXT [MORE_INCLUDE_DIRS...]
# Passes when SOURCE fails to compile and the compiler's message contains EXPECTED_TEXT.
set -u
cxx=$1 inc=$2 src=$3 expected=$4
shift 4
more=()
for dir in "$@"; do more+=("-I$dir"); done
out=$("$cxx" -std=c++20 -fsyntax-only -I"$inc" "${more[@]}" "$src" 2>&1)
if [ $? -eq 0 ]; then
  echo "FAIL: $src compiled, but it must not"
  exit 1
fi
if ! grep -qF -- "$expected" <<<"$out"; then
  echo "FAIL: the compiler's message for $src lacks: $expected"
  echo "$out" | head -40
  exit 1
fi
echo "ok: $src is rejected with: $expected"
