#!/usr/bin/env bash
# Session 16, the last call: the lean run of the landed build (prebuilt, carried compressed).
tar xJf xr14/final/prebuilt.tar.xz && tar xJf xr11/pack/data.tar.xz && LIMIT_S=${LIMIT_S:-540} bash scripts/device_run_lean.sh
