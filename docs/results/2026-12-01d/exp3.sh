#!/usr/bin/env bash
# Session 5, call 3: the lean run of the build (entropy bar, priority transfers), then an A/B of the priority.
set -uo pipefail
LIMIT_S=440 bash scripts/device_run_lean.sh > /tmp/lean.txt 2>&1
mv "$OUT/results.tgz" "$OUT/lean.tgz"
tail -30 /tmp/lean.txt
LIMIT_S=140 VARIANTS='prio||--coder adaptive --chunk 64M --phases
noprio||--coder adaptive --chunk 64M --phases --no-priority
prio2||--coder adaptive --chunk 64M
noprio2||--coder adaptive --chunk 64M --no-priority
prio3||--coder adaptive --chunk 64M
noprio3||--coder adaptive --chunk 64M --no-priority' bash scripts/perf_env_sweep.sh 2>&1 | grep -v "^#" | tail -20
