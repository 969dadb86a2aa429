#!/usr/bin/env bash
# ncclz-perf's 256 MiB allreduce on 4 emulated ranks under several NCCL settings, one row each, to
# see what the transfers gain from NCCL's point-to-point settings (they do not touch NCCL's own
# allreduce, which runs in the same process as the baseline). One line per variant on stdin or in
# $VARIANTS: NAME|ENV ASSIGNMENTS (may be empty)|ncclz-perf ARGS. Needs ./prebuilt
# (scripts/pack_prebuilt.sh) or a build in $BUILD. LIMIT_S bounds the whole call.
#   run(command="LIMIT_S=500 VARIANTS='...' bash scripts/perf_env_sweep.sh", carry=[".deps", "data", "prebuilt"])
set -uo pipefail
default_limit=420
# shellcheck source=scripts/timed_steps.sh
source "$(dirname "$0")/timed_steps.sh"
use_build
data_args=()
[ -d data ] && data_args=(--data data)
variants=${VARIANTS:-$(cat)}
while IFS='|' read -r name envs args; do
  [ -z "$name" ] && continue
  # shellcheck disable=SC2086 # the assignments and arguments are word lists on purpose
  step "$name" 60 env $envs scripts/emulated_cluster.sh -n 4 --timeout 60 -- "$PWD/$build/benchmarks/ncclz-perf" \
    "${data_args[@]}" -C allreduce -b 256M -e 256M --json "$logs/$name.jsonl" $args
  echo "-- $name [$envs] $args" >>"$logs/table.txt"
  grep -E "^ +[0-9]+ +[0-9]+ |Out of bounds" "$logs/$name.log" >>"$logs/table.txt"
done <<<"$variants"
finish_sweep
