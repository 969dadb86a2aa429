#!/usr/bin/env bash
# Session 22, call 3: the rest of 457e927's cluster tests (peer failure, perf smoke, examples).
set -uo pipefail
tar xJf xr/prebuilt.tar.xz && tar xJf xr/data.tar.xz
cat prebuilt/commit
timeout 400 scripts/run_test_list.sh prebuilt 'peer_failure|perf_smoke|example' | tee "$OUT/tests.txt"
(cd "$OUT/tests" && tar czf ../tests.tgz .) && rm -rf "$OUT/tests"
