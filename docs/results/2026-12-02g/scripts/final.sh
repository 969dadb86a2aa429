#!/usr/bin/env bash
# Session 13, the lean run of the landed build (7beffe0, prebuilt here): GPU tests, allreduce rows
# on 4 emulated ranks, cluster tests, the codec bench on the fields, gradients.
#   run(command="bash docs/results/2026-12-02g/scripts/final.sh", carry=["xr11/pack", "prebuilt"])
set -uo pipefail
tar xJf xr11/pack/data.tar.xz  # the fields, packed to fit the carry
LIMIT_S=${LIMIT_S:-500} OUT="$OUT/final" bash scripts/device_run_lean.sh | tail -60
