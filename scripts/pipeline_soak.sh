#!/usr/bin/env bash
# Soak test of the pipelined allreduce on 4 emulated ranks: test_collectives' back-to-back check
# alone (NCCLZ_BACK_TO_BACK_ONLY) at 256 MiB, many rounds of 8 calls, once per variant. One line
# per variant on stdin or in $VARIANTS: NAME|ENV ASSIGNMENTS (may be empty). Needs ./prebuilt
# (scripts/pack_prebuilt.sh) or a build in $BUILD. LIMIT_S bounds the whole call.
#   run(command="LIMIT_S=300 VARIANTS='q8|CUDA_DEVICE_MAX_CONNECTIONS=8' bash scripts/pipeline_soak.sh", carry=[".deps", "prebuilt"])
set -uo pipefail
default_limit=300
# shellcheck source=scripts/timed_steps.sh
source "$(dirname "$0")/timed_steps.sh"
use_build
variants=${VARIANTS:-$(cat)}
while IFS='|' read -r name envs; do
  [ -z "$name" ] && continue
  # shellcheck disable=SC2086 # the assignments are a word list on purpose
  step "$name" "${STEP_S:-120}" env NCCLZ_BACK_TO_BACK_ONLY=1 NCCLZ_BACK_TO_BACK_MIB="${MIB:-256}" \
    NCCLZ_BACK_TO_BACK_ROUNDS="${ROUNDS:-20}" $envs scripts/emulated_cluster.sh -n 4 --timeout "${STEP_S:-120}" --log-dir "$logs/$name" -- \
    "$PWD/$build/test/cluster/test_collectives"
  { echo "-- $name [$envs]"; grep -hE "back to back|FAILED|rank .*: (ok|FAILED)" "$logs/$name.log" "$logs/$name"/rank*.log 2>/dev/null | sort | uniq -c | head -20; } >>"$logs/table.txt"
done <<<"$variants"
finish_sweep
