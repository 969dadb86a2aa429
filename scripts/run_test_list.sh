#!/usr/bin/env bash
# Runs the tests of a prebuilt/tests.tsv (scripts/pack_prebuilt.sh) as `meson test` would: each
# with its timeout, exit 0 OK, 77 skipped, anything else a failure (its output's tail printed).
#   scripts/run_test_list.sh prebuilt [NAME_REGEX]     logs in $OUT/tests or ./device-out/tests
set -uo pipefail
dir=$1
filter=${2:-.}
src=$PWD
build=$(cd "$dir" && pwd)
logs=${OUT:-$PWD/device-out}/tests
mkdir -p "$logs"
export LD_LIBRARY_PATH="$build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
ok=0 skipped=0 failed=0
while IFS=$'\t' read -r -a f; do
  name=${f[0]} limit=${f[1]}
  [[ $name =~ $filter ]] || continue
  cmd=()
  for a in "${f[@]:2}"; do a=${a//@BUILD@/$build}; cmd+=("${a//@SRC@/$src}"); done
  start=$SECONDS
  timeout "$limit" "${cmd[@]}" >"$logs/$name.log" 2>&1 </dev/null
  rc=$?
  case $rc in
    0) verdict=OK; ok=$((ok + 1)) ;;
    77) verdict=SKIP; skipped=$((skipped + 1)) ;;
    124) verdict=TIMEOUT; failed=$((failed + 1)) ;;
    *) verdict="FAIL rc=$rc"; failed=$((failed + 1)) ;;
  esac
  printf '%-45s %-10s %4d s\n' "$name" "$verdict" $((SECONDS - start))
  [ $rc -ne 0 ] && [ $rc -ne 77 ] && tail -15 "$logs/$name.log" | sed 's/^/    /'
done <"$dir/tests.tsv"
echo "Ok: $ok  Skipped: $skipped  Failed: $failed"
[ $failed -eq 0 ]
