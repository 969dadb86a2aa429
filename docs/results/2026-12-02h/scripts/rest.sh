#!/usr/bin/env bash
# Session 14 call 6: what call 4's lean run ran out of time for (codec bench on the fields,
# PyTorch gradients and their lossless ratio), and one more 4-part allreduce row, on the landed build.
set -uo pipefail
tar xJf xr11/pack/data.tar.xz
SKIP_STEPS="gpu_tests perf-adaptive perf-adaptive-2parts perf-fixed perf-fixed-2parts perf-adaptive-phases perf-adaptive-bf16 perf-gradient-adaptive-f16 perf-gradient-fixed-f16 perf-gradient-adaptive-bf16 perf-gradient-adaptive perf-fixed8 perf-fixed4 cluster_tests" \
  LIMIT_S=${LIMIT_S:-240} OUT="$OUT/rest" bash scripts/device_run_lean.sh | tail -40
