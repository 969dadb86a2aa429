#!/usr/bin/env bash
# docs/results/2026-12-02b/scripts/spills.sh INCDIR (from the repository root; needs /tmp/opcodes.json from sasslite.py learn): ptxas spill counts and STL/LDL source lines of Adaptive's RelBound f32 encoder
set -e
inc=$1
PATH=/usr/local/cuda/bin:$PATH nvcc -std=c++20 --expt-relaxed-constexpr -I$inc -arch=sm_90 -O3 -DNDEBUG -lineinfo -cubin -Xptxas -v docs/results/2026-12-02b/scripts/${TU:-adk}.cu -o /tmp/spills.cubin 2>&1 | grep -E "spill|error" | head -3
/usr/bin/python3 docs/results/2026-12-02b/scripts/sasslite.py lines /tmp/spills.cubin | awk '{print $2, $3}' | uniq -c | awk '{printf "%s %s x%d | ", $2, $3, $1} END {print ""}'
