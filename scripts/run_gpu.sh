#!/usr/bin/env bash
# Every test and measurement of ncclz on a GPU machine, in one command:
#
#   scripts/run_gpu.sh [--quick] [--codec] [--collectives] [--multigpu] [--profile] [--model]
#                      [--sanitize]
#   scripts/run_gpu.sh --pack BUILD_DIR
#
# Modes (any number; none means --quick --codec --collectives --multigpu, which produces every
# figure of docs/benchmarks.md):
#   --quick        the GPU and multi-rank tests (meson's test list without the host-only tests,
#                  which need no GPU) and a short ncclz-perf run: 4 emulated ranks, every
#                  collective, 1-16 MiB
#   --codec        ncclz-codec-bench: FixedLength at 256 MiB (REL 1e-2, 1e-3, 1e-4), every coder
#                  at 64 MiB (REL 1e-3, 1e-4), every coder with and without tile checksums at
#                  64 MiB (REL 1e-3; f32 and bf16), Adaptive's time over the coder it picks (ROUNDS
#                  rounds, default 16), the lossless ratio of real PyTorch gradients
#                  (tools/make_gradients.py; skipped where torch does not import)
#   --collectives  ncclz-perf on 4 emulated ranks (scripts/emulated_cluster.sh: one process a rank,
#                  sockets on loopback, MPS): sweeps 1-256 MiB (every collective at REL 1e-3, the
#                  allreduce at 1e-2), every collective at 256 MiB with its phases, the 256 MiB
#                  allreduce per coder, quantizer, element type and part count, the default coder
#                  (auto) against each coder forced (auto, fixed_length, adaptive, twice in turn, on
#                  the held-out fields and on gradients), the autotuner's route against the better
#                  of NCCL and the compressed route forced (--route-check; every collective, 1 MiB-
#                  1 GiB, f32 and bf16), one row against NCCL with tuned socket
#                  threads, VARIANTS rows; a soak of back-to-back pipelined allreduces (SOAK_ROUNDS
#                  rounds of 8 calls, default 20); plots
#   --multigpu     ncclz-perf with one GPU per rank (2 or more GPUs; skipped otherwise), 4 KB-1 GB:
#                  NCCL's transports with the default route and always compressed, bf16, and NCCL
#                  forced onto sockets; plots
#   --profile      Nsight Compute (ncu) of one encode and one decode launch of the codec bench's
#                  64 MiB inputs: CODERS (default huffman), BOUNDS (default 1e-3), PROFILE_ARGS
#                  (more bench arguments, e.g. "--only concat"); per-line source counters in csv
#   --model        what benchmarks/speedup_model.py is checked against, on the held-out data
#                  (docs/data.md): a GPT-2-shaped model's gradients (85 M values after 300 steps,
#                  benchmarks/torch/train_ddp.py --dump-gradients; skipped without torch), the codec
#                  on them, on the held-out fields and on every field (--only concat); the 256 MiB
#                  allreduce on 4 emulated ranks on the held-out fields and on the gradients, REL
#                  1e-3 and FixedRate<8>/<4>, at NCCL's defaults and with NCCL_SOCKET_NTHREADS=2
#                  NCCL_NSOCKS_PERTHREAD=1; 2 and 3 ranks on the held-out fields; 4 ranks on the
#                  tuning fields (each run with NCCL's alltoall beside, whose rate the model
#                  gives ncclz's grouped sends); then the model's validation table. Runs that fit
#                  the link's latency sweep 64 KiB-256 MiB
#   --sanitize     compute-sanitizer on the GPU tests: memcheck and synccheck on SANITIZE_TESTS
#                  (a Catch2 test spec; default every test but [large] and [perf]),
#                  racecheck on SANITIZE_RACE_TESTS (default: the corruption and alignment cases,
#                  every coder's round trips and the zero_run tile tests, in parallel shards,
#                  racecheck being some 100 times slower), and memcheck, racecheck and synccheck
#                  on 4 emulated ranks of test_corruption (no MPS; NCCL's own kernels and API
#                  errors left out); any finding fails the step
#   --pack BUILD   on a machine that builds but has no GPU: copy BUILD's executables (stripped),
#                  libcudart and its test list into ./prebuilt; a run that finds
#                  ./prebuilt/tests.tsv uses those executables and builds nothing (no meson or
#                  nvcc needed on the GPU machine)
#
# Environment:
#   OUT          where everything goes (default ./gpu-run-out)
#   BUILD        meson build folder (default build-gpu), configured here when new, with
#                -Dgpu_arch=$GPU_ARCH (default sm_90) and CATCH2_DIR (default ./.deps when it holds
#                catch2/catch.hpp); only the targets the modes need are built
#   DATA         the real fields (default ./data, made by tools/make_datasets.sh where
#                libncarg-data and libnetcdf-dev are installed); without them the benchmarks use
#                generated inputs
#   VARIANTS     extra 256 MiB allreduce rows for --collectives, one a line:
#                NAME|ENV ASSIGNMENTS|ncclz-perf ARGUMENTS
#   TESTS        regex: run only the tests whose name matches
#   LIMIT_S      limit of the whole run in seconds; a step with no time left is skipped
#   SKIP_STEPS   step names to skip (glob patterns, e.g. 'test/* codec/adaptive-overhead')
#   KEEP_FILES=1 keep logs/ and results/ beside the archive
#
# Every step runs under its own `timeout`. Output: $OUT/summary.txt (one line a step, then the
# headline rows), printed last, and $OUT/gpu-run.tgz holding logs/ (each step's output),
# results/ (JSON, in the layout of benchmarks/results/, and plots) and summary.txt.
# Exit status: 0 when no step failed (skipped steps do not fail a run).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
src=$PWD

usage() { sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
die() { echo "run_gpu: $*" >&2; exit 2; }

modes=()
pack_build=""
while [ "$#" -gt 0 ]; do
  case "$1" in
    --quick | --codec | --collectives | --multigpu | --profile | --model | --sanitize) modes+=("${1#--}"); shift ;;
    --pack) [ "$#" -ge 2 ] || die "--pack needs a build folder"; pack_build=$2; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
[ ${#modes[@]} -eq 0 ] && modes=(quick codec collectives multigpu)
has_mode() { [[ " ${modes[*]} " == *" $1 "* ]]; }

# --- --pack: executables and test list for a GPU machine without a build ------------------------
# nvcc objects are rebuilt where they are older than the newest header (a meson without nvcc
# depfiles does not see header changes), and no executable older than that header is packed.
newest_header() { find "$src/include" -type f -printf '%T@ %p\n' | sort -n | tail -1 | cut -d' ' -f2; }
drop_stale_objects() { find "$1" -name '*.cu.o' ! -newer "$(newest_header)" -delete; }
test_list() { # BUILD: meson's tests as NAME TAB TIMEOUT TAB CMD..., paths as @SRC@ and @BUILD@
  local build_abs
  build_abs=$(cd "$1" && pwd)
  meson introspect "$1" --tests | python3 -c '
import json, sys
src, build = sys.argv[1], sys.argv[2]
for t in json.load(sys.stdin):
    cmd = [a.replace(build, "@BUILD@").replace(src, "@SRC@") for a in t["cmd"]]
    print("\t".join([t["name"], str(t["timeout"])] + cmd))' "$src" "$build_abs"
}
if [ -n "$pack_build" ]; then
  [ -f "$pack_build/build.ninja" ] || die "$pack_build is not a meson build folder"
  drop_stale_objects "$pack_build"
  ninja -C "$pack_build" >/dev/null || die "the build failed (ninja -C $pack_build)"
  dest=$src/prebuilt
  rm -rf "$dest" && mkdir -p "$dest/lib"
  header=$(newest_header)
  build_abs=$(cd "$pack_build" && pwd)
  exes=$(meson introspect "$pack_build" --targets | python3 -c '
import json, os, sys
for t in json.load(sys.stdin):
    if t["type"] == "executable" and t["name"] != "host_tests":
        for f in t["filename"]:
            print(os.path.relpath(f, sys.argv[1]))' "$build_abs")
  for exe in $exes; do
    [ "$pack_build/$exe" -nt "$header" ] || die "$pack_build/$exe is older than $header"
    mkdir -p "$dest/$(dirname "$exe")" && cp "$pack_build/$exe" "$dest/$exe" && strip --strip-unneeded "$dest/$exe"
  done
  test_list "$pack_build" | awk -F'\t' '$1 != "host" && $1 !~ /^compile_fail/' >"$dest/tests.tsv"
  cudart=$(ldd "$dest/test/gpu_tests" 2>/dev/null | awk '/libcudart/ {print $3}')
  [ -n "$cudart" ] && cp "$cudart" "$dest/lib/"
  { git -C "$src" rev-parse --short HEAD; git -C "$src" diff --quiet HEAD || echo "(with uncommitted changes)"; } >"$dest/commit" 2>/dev/null
  du -sh "$dest"
  exit 0
fi

# --- steps -----------------------------------------------------------------------------------------
out=${OUT:-$src/gpu-run-out}
mkdir -p "$out" && out=$(cd "$out" && pwd)
logs=$out/logs
res=$out/results
rm -rf "$logs" "$res" "$out/gpu-run.tgz"
mkdir -p "$logs" "$res"
summary=$out/summary.txt
: >"$summary"
limit_s=${LIMIT_S:-0}
start=$SECONDS
failed=0

record() { printf '%-50s %-16s %s\n' "$1" "$2" "$3" | tee -a "$summary"; }
skipped_by_user() {
  local pat
  for pat in ${SKIP_STEPS:-}; do
    # shellcheck disable=SC2053  # a glob on purpose
    [[ $1 == $pat ]] && return 0
  done
  return 1
}
# step NAME SECONDS CMD...: CMD under `timeout` (at most SECONDS, and at most what LIMIT_S leaves),
# its output in logs/NAME.log, one line in the summary. Exit 77 counts as skipped.
step() {
  local name=$1 max=$2 t
  shift 2
  if skipped_by_user "$name"; then record "$name" "skipped" "(SKIP_STEPS)"; return 0; fi
  t=$max
  if [ "$limit_s" -gt 0 ]; then
    local left=$((limit_s - (SECONDS - start)))
    [ "$left" -lt "$t" ] && t=$left
    if [ "$t" -le 5 ]; then record "$name" "skipped" "(out of LIMIT_S)"; return 0; fi
  fi
  mkdir -p "$(dirname "$logs/$name.log")" "$(dirname "$res/$name")"
  local s=$SECONDS rc verdict
  timeout "$t" "$@" >"$logs/$name.log" 2>&1 </dev/null
  rc=$?
  case $rc in
    0) verdict=ok ;;
    77) verdict=skipped ;;
    124) verdict="TIMEOUT"; failed=$((failed + 1)) ;;
    *) verdict="FAILED rc=$rc"; failed=$((failed + 1)) ;;
  esac
  record "$name" "$verdict" "$((SECONDS - s)) s (limit $t s)"
  return $rc
}
note() { record "$1" "skipped" "($2)"; }

# --- executables: ./prebuilt, or the targets the modes need ----------------------------------------
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nvidia-smi topo -m; } >"$logs/gpu.txt" 2>&1
targets=()
has_mode quick && targets+=(test/gpu_tests test/cluster/nccl_smoke test/cluster/test_collectives test/cluster/test_peer_failure
  test/cluster/test_lossless test/cluster/test_default_codec examples/00_compress_field examples/01_allreduce_gradients examples/02_custom_quantizer
  examples/03_broadcast_field benchmarks/ncclz-perf)
has_mode codec && targets+=(benchmarks/ncclz-codec-bench benchmarks/ncclz-lossless-study)
has_mode collectives && targets+=(benchmarks/ncclz-perf test/cluster/test_collectives)
has_mode multigpu && targets+=(benchmarks/ncclz-perf)
has_mode profile && targets+=(benchmarks/ncclz-codec-bench)
has_mode model && targets+=(benchmarks/ncclz-perf benchmarks/ncclz-codec-bench)
has_mode sanitize && targets+=(test/gpu_tests test/cluster/test_corruption)
if [ -f "$src/prebuilt/tests.tsv" ]; then
  bin=$src/prebuilt
  export LD_LIBRARY_PATH="$bin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  record "executables" "prebuilt" "$(tr '\n' ' ' <"$bin/commit" 2>/dev/null)"
  cp "$bin/tests.tsv" "$logs/tests.tsv"
else
  build=${BUILD:-build-gpu}
  catch2=${CATCH2_DIR:-}
  [ -z "$catch2" ] && [ -f "$src/.deps/catch2/catch.hpp" ] && catch2=$src/.deps
  if [ ! -f "$build/build.ninja" ]; then
    step setup 120 meson setup "$build" -Dgpu_arch="${GPU_ARCH:-sm_90}" --buildtype=release \
      ${catch2:+-Dcatch2_dir="$catch2"} || { tail -30 "$logs/setup.log"; exit 1; }
  fi
  drop_stale_objects "$build"
  # shellcheck disable=SC2046  # the target list, once each
  step build 1800 ninja -C "$build" $(printf '%s\n' "${targets[@]}" | sort -u) || { tail -40 "$logs/build.log"; exit 1; }
  bin=$(cd "$build" && pwd)
  test_list "$build" | awk -F'\t' '$1 != "host" && $1 !~ /^compile_fail/' >"$logs/tests.tsv"
fi
# The real fields (docs/data.md; example_03 and the benchmarks read them), where Debian's
# libncarg-data is installed; generated inputs otherwise.
if [ -z "${DATA:-}" ] && [ ! -d "$src/data" ] && [ "${modes[*]}" != profile ]; then
  if [ -d "${NCARG_CDF:-/usr/share/ncarg/data/cdf}" ]; then
    step data 300 "$src/tools/make_datasets.sh" "$src/data" || rm -rf "$src/data"
  else
    note data "no libncarg-data: generated inputs only"
  fi
fi
data_args=()
data=${DATA:-$src/data}
[ -d "$data" ] && data_args=(--data "$(cd "$data" && pwd)")
all6=allreduce,reduce_scatter,allgather,broadcast,reduce,alltoall

# perf NAME SECONDS "ENV ASSIGNMENTS" "CLUSTER OPTIONS" NCCLZ-PERF ARGUMENTS...: its JSON in results/NAME.jsonl
perf() {
  local name=$1 limit=$2 envs=$3 cluster=$4
  shift 4
  # shellcheck disable=SC2086  # word lists on purpose
  step "$name" "$limit" env $envs "$src/scripts/emulated_cluster.sh" $cluster --timeout $((limit - 10)) \
    --log-dir "$logs/$name.ranks" -- \
    "$bin/benchmarks/ncclz-perf" --json "$res/$name.jsonl" "$@"
}
plot() { # DIR JSONL...: PNGs of those files that exist, where matplotlib is there
  local dir=$1 f files=()
  shift
  for f in "$@"; do [ -s "$f" ] && files+=("$f"); done
  [ ${#files[@]} -gt 0 ] || return 0
  if python3 -c 'import matplotlib' 2>/dev/null; then
    step "plot/$(basename "$dir")" 120 python3 "$src/benchmarks/plot_perf.py" --out "$dir" "${files[@]}"
  else
    note "plot/$(basename "$dir")" "no matplotlib"
  fi
}

# --- --quick: the tests, as meson test would run them ----------------------------------------------
if has_mode quick; then
  while IFS=$'\t' read -r -a f; do
    name=${f[0]} limit=${f[1]}
    [[ $name =~ ${TESTS:-.} ]] || continue
    cmd=()
    for a in "${f[@]:2}"; do a=${a//@BUILD@/$bin}; cmd+=("${a//@SRC@/$src}"); done
    (cd "$bin" && step "test/$name" "$limit" "${cmd[@]}")
    rc=$?
    [ $rc -ne 0 ] && [ $rc -ne 77 ] && { failed=$((failed + 1)); tail -15 "$logs/test/$name.log" | sed 's/^/    /'; }
  done <"$logs/tests.tsv"
  perf quick/perf-smoke 200 "" "-n 4" "${data_args[@]}" -C "$all6" -b 1M -e 16M --rel 1e-3
fi

# --- --codec ---------------------------------------------------------------------------------------
# One round of the overhead measurement: every coder on the generated inputs, f32 and 16-bit.
overhead_rounds() { # ROUNDS OUTFILE
  local r input
  for ((r = 1; r <= $1; r++)); do
    for input in smooth noise; do
      "$bin/benchmarks/ncclz-codec-bench" --only "$input" --bounds 1e-3,1e-4 --coders fixed_length,zero_run,huffman,adaptive \
        --dtype f32,f16,bf16 --runs 7 --size-mb 64 --seed 7 | grep -E "^(smooth|noise)" >>"$2" || return 1
    done
    echo "round $r done"
  done
  # Adaptive's median time over the median time of the coder whose tiles it wrote (from its tile
  # counts r/f/h/z), for RelBound and AbsBound.
  python3 - "$2" <<'PY'
import collections, statistics, sys
t = collections.defaultdict(list)
modes = {}
for line in open(sys.argv[1]):
    f = line.split()
    name, coder, bound = f[0], f[1], f[3]
    t[(name, bound, coder)].append((1 / float(f[5]), 1 / float(f[9])))  # times from comp_GB/s, comp_abs_GB/s
    if coder == "adaptive":
        counts = [int(x) for x in f[-1].split("/")]
        modes[(name, bound)] = ["raw", "fixed_length", "huffman", "zero_run"][counts.index(max(counts))]
print("input        bound  picks         overhead % (RelBound / AbsBound), rounds")
for (name, bound), picks in sorted(modes.items()):
    a, p = t[(name, bound, "adaptive")], t.get((name, bound, picks))
    if not p:
        continue
    med = lambda rows, i: statistics.median(r[i] for r in rows)
    over = [100 * (med(a, i) / med(p, i) - 1) for i in (0, 1)]
    print(f"{name:12} {bound:6} {picks:13} {over[0]:+.1f}/{over[1]:+.1f}  {len(a)}")
PY
}
if has_mode codec; then
  cb=$bin/benchmarks/ncclz-codec-bench
  step codec/fixed-length-256M 600 "$cb" "${data_args[@]}" --json "$res/codec/fixed-length-256M.json"
  step codec/coders-64M 400 "$cb" "${data_args[@]}" --bounds 1e-3,1e-4 --coders fixed_length,huffman,zero_run,adaptive \
    --runs 5 --size-mb 64 --json "$res/codec/coders-64M.json"
  step codec/checksums-64M 400 "$cb" "${data_args[@]}" --checksums --bounds 1e-3 --coders fixed_length,huffman,zero_run,adaptive \
    --dtype f32,bf16 --runs 9 --size-mb 64 --json "$res/codec/checksums-64M.json"
  export bin
  export -f overhead_rounds
  # shellcheck disable=SC2016  # expanded by the inner bash
  step codec/adaptive-overhead $((60 * ${ROUNDS:-16} + 60)) bash -c 'overhead_rounds "$1" "$2"' _ "${ROUNDS:-16}" "$res/codec/overhead-rows.txt" &&
    sed -n '/^input /,$p' "$logs/codec/adaptive-overhead.log" >"$res/codec/adaptive-overhead.txt"
  grads=${TMPDIR:-/tmp}/ncclz-gradients
  if python3 -c 'import torch' 2>/dev/null; then
    # Last of the codec steps: PyTorch on the GPU would disturb timed rows.
    step codec/make-gradients 300 python3 "$src/tools/make_gradients.py" "$grads" --steps 20 --seed 0
    step codec/lossless-gradients 120 "$cb" --lossless "$grads" --coders fixed_length,adaptive --runs 5
    step codec/lossless-study 120 "$bin/benchmarks/ncclz-lossless-study" "$grads"/*.f32 "$grads"/*.bf16
  else
    note codec/lossless-gradients "python3 cannot import torch"
  fi
fi

# --- --collectives ----------------------------------------------------------------------------------
if has_mode collectives; then
  c=collectives-4ranks
  a=allreduce-4ranks
  perf $c/sweep-rel1e-3 600 "" "-n 4" "${data_args[@]}" -C "$all6" --rel 1e-3
  perf $c/sweep-rel1e-2 300 "" "-n 4" "${data_args[@]}" -C allreduce --rel 1e-2 --phases
  perf $c/256M-rel1e-2 300 "" "-n 4" "${data_args[@]}" -C "$all6" -b 256M -e 256M -n 10 -w 3 --rel 1e-2 --phases
  perf $c/256M-rel1e-3 300 "" "-n 4" "${data_args[@]}" -C "$all6" -b 256M -e 256M -n 10 -w 3 --rel 1e-3 --phases
  row() { perf "$a/$1" "$2" "" "-n 4" -C allreduce -b 256M -e 256M "${@:3}"; }
  row perf-adaptive 90 "${data_args[@]}" --rel 1e-3 --coder adaptive
  row perf-adaptive-2parts 90 "${data_args[@]}" --rel 1e-3 --coder adaptive --chunk 128M
  row perf-adaptive-4parts 90 "${data_args[@]}" --rel 1e-3 --coder adaptive --chunk 64M
  row perf-adaptive-phases 90 "${data_args[@]}" --rel 1e-3 --coder adaptive --chunk 64M --phases
  for r in 1 2 3; do row repeat-adaptive-4parts-$r 90 "${data_args[@]}" --rel 1e-3 --coder adaptive --chunk 64M; done
  row perf-fixed 90 "${data_args[@]}" --rel 1e-3 --coder fixed_length
  row perf-fixed-2parts 90 "${data_args[@]}" --rel 1e-3 --coder fixed_length --chunk 128M
  row perf-adaptive-bf16 90 "${data_args[@]}" --rel 1e-3 --coder adaptive -d bfloat16
  row perf-fixed8 90 "${data_args[@]}" --quantizer fixed8
  row perf-fixed4 90 "${data_args[@]}" --quantizer fixed4
  # Generated gradients: fp16 holds their sums (it does not hold the fields').
  row perf-gradient-adaptive 120 --gen gradient --rel 1e-3 --coder adaptive
  row perf-gradient-adaptive-f16 120 --gen gradient --rel 1e-3 --coder adaptive -d half
  row perf-gradient-adaptive-bf16 120 --gen gradient --rel 1e-3 --coder adaptive -d bfloat16
  row perf-gradient-fixed-f16 120 --gen gradient --rel 1e-3 --coder fixed_length -d half
  # The default coder against each coder forced, interleaved: A B C A B C per input (the
  # held-out fields where the data has them).
  for input in fields gradients; do
    args=("${data_args[@]}")
    [ -d "$data/heldout" ] && args=(--data "$(cd "$data/heldout" && pwd)")
    [ "$input" = gradients ] && args=(--gen gradient)
    for r in 1 2; do
      for coder in auto fixed_length adaptive; do row coders-$input-$coder-$r 90 "${args[@]}" --rel 1e-3 --coder $coder; done
    done
  done
  # The autotuner's route against the better of NCCL's and the compressed route forced, taking
  # turns each iteration: every collective, 1 MiB - 1 GiB, f32 and bf16 (the summary counts rows
  # more than 5% slower than the better route).
  for dt in float bfloat16; do
    perf $c/route-check-$dt 600 "" "-n 4" "${data_args[@]}" -C "$all6" -b 1M -e 1G -f 4 -n 5 -w 2 --rel 1e-3 -d $dt \
      --route-check
  done
  # NCCL's ring at its best socket setting measured (the setting holds for both in a process).
  perf $a/perf-adaptive-4parts-sockets2x1 90 "NCCL_SOCKET_NTHREADS=2 NCCL_NSOCKS_PERTHREAD=1" "-n 4" \
    -C allreduce -b 256M -e 256M "${data_args[@]}" --rel 1e-3 --coder adaptive --chunk 64M --phases
  while IFS='|' read -r name envs args; do
    [ -z "$name" ] && continue
    # shellcheck disable=SC2086  # the arguments are a word list on purpose
    perf "$a/variant-$name" 90 "$envs" "-n 4" -C allreduce -b 256M -e 256M "${data_args[@]}" $args
  done <<<"${VARIANTS:-}"
  step $a/soak-back-to-back 300 env NCCLZ_BACK_TO_BACK_ONLY=1 NCCLZ_BACK_TO_BACK_MIB=256 \
    NCCLZ_BACK_TO_BACK_ROUNDS="${SOAK_ROUNDS:-20}" "$src/scripts/emulated_cluster.sh" -n 4 --timeout 290 -- \
    "$bin/test/cluster/test_collectives"
  plot "$res/img/emulated" "$res"/$c/sweep-*.jsonl
fi

# --- --multigpu ------------------------------------------------------------------------------------
if has_mode multigpu; then
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
  if [ "$gpus" -lt 2 ]; then
    note two-gpus "needs 2 or more GPUs, found $gpus"
  else
    g=two-gpus
    sweep=(-C "$all6" -b 4K -e 1G -f 2 -n 10 -w 3 --rel 1e-3)
    perf $g/nvlink-autotune 600 "" "-n $gpus --real-gpus" "${data_args[@]}" "${sweep[@]}"
    perf $g/nvlink-always-compressed 600 "" "-n $gpus --real-gpus" "${data_args[@]}" "${sweep[@]}" --fallback-below 0 --phases
    perf $g/nvlink-bf16 600 "" "-n $gpus --real-gpus" "${data_args[@]}" "${sweep[@]}" -d bfloat16
    perf $g/socket-autotune 600 "" "-n $gpus --real-gpus --socket" "${data_args[@]}" "${sweep[@]}"
    plot "$res/img/two-gpus" "$res/$g/nvlink-autotune.jsonl" "$res/$g/socket-autotune.jsonl" "$res/$g/nvlink-always-compressed.jsonl"
  fi
fi

# --- --profile -------------------------------------------------------------------------------------
if has_mode profile; then
  if ! command -v ncu >/dev/null 2>&1; then
    note profile "ncu (Nsight Compute) not found"
  else
    mkdir -p "$res/profile"
    for k in encode decode; do
      skip=0
      [ $k = encode ] && skip=4  # past the bench's warm-up launches
      # shellcheck disable=SC2086  # PROFILE_ARGS is a word list
      step profile/$k 300 ncu --clock-control none --section SpeedOfLight --section Occupancy --section WarpStateStats \
        --section SourceCounters --section LaunchStats -k "regex:${k}_kernel" --launch-skip $skip --launch-count 1 \
        -o "$res/profile/$k" "$bin/benchmarks/ncclz-codec-bench" ${PROFILE_ARGS:-} --bounds "${BOUNDS:-1e-3}" \
        --coders "${CODERS:-huffman}" --runs 1 --size-mb 64 &&
        {
          ncu -i "$res/profile/$k.ncu-rep" --page details >"$res/profile/$k-details.txt" 2>&1
          ncu -i "$res/profile/$k.ncu-rep" --page source --csv --print-source cuda,sass >"$res/profile/$k-source.csv" 2>&1 ||
            ncu -i "$res/profile/$k.ncu-rep" --page source --csv --print-source sass >"$res/profile/$k-source.csv" 2>&1
        }
    done
  fi
fi

# --- --model ---------------------------------------------------------------------------------------
# Held-out data only (tools/make_datasets.sh: DATA/heldout; the gradients of a model no tuning
# decision has seen), ordered by what the model's check needs most; LIMIT_S skips the rest.
if has_mode model; then
  v=model-validation
  tuned="NCCL_SOCKET_NTHREADS=2 NCCL_NSOCKS_PERTHREAD=1"
  sweep=(-b 64K -e 256M -f 16)  # NCCL's small rows fix the link's latency
  one=(-b 256M -e 256M)
  mrow() { # NAME LIMIT ENV RANKS DATA SIZES... -- ncclz-perf arguments
    local name=$1 limit=$2 envs=$3 n=$4 input=$5
    shift 5
    # NCCL's alltoall (grouped sends and receives) gives the rate ncclz's own grouped sends move at
    perf "$v/$name" "$limit" "$envs" "-n $n" --data "$input" -C allreduce,alltoall -n 8 -w 2 "$@"
  }
  if [ -d "$data/heldout" ]; then
    mrow heldout-4ranks-rel-defaults 90 "" 4 "$data/heldout" "${sweep[@]}" --rel 1e-3
    mrow heldout-4ranks-rel-2x1 90 "$tuned" 4 "$data/heldout" "${sweep[@]}" --rel 1e-3
  else
    note "$v/heldout" "no $data/heldout (tools/make_datasets.sh makes it)"
  fi
  g=${TMPDIR:-/tmp}/ncclz-gpt2-gradients  # generated data: only its manifest goes into the results
  if python3 -c 'import torch, transformers' 2>/dev/null; then
    rm -rf "$g"
    step "$v/gpt2-gradients" 300 env PYTHONPATH="$src/python" "$src/scripts/emulated_cluster.sh" -n 1 --no-mps \
      --timeout 290 -- python3 "$src/benchmarks/torch/train_ddp.py" --model gpt2-base --runs nccl:0 --steps 300 \
      --dump-gradients "$g" --out "$res/$v/gpt2-training" &&
      cp "$g/MANIFEST.tsv" "$res/$v/gpt2-training/gradients-manifest.tsv"
  else
    note "$v/gpt2-gradients" "python3 cannot import torch and transformers"
  fi
  codec() { # NAME DIR: FixedLength and Adaptive on DIR's fields concatenated, whole GPU
    [ -d "$2" ] && step "$v/codec-$1" 120 "$bin/benchmarks/ncclz-codec-bench" --data "$2" --only concat \
      --coders fixed_length,adaptive --bounds 1e-3 --runs 5 --size-mb 64 --json "$res/$v/codec-$1.json"
  }
  codec heldout "$data/heldout"
  codec gpt2 "$g"
  for q in "rel:--rel 1e-3" "fixed8:--quantizer fixed8" "fixed4:--quantizer fixed4"; do
    # shellcheck disable=SC2086  # the quantizer's arguments are a word list
    if [ -d "$g" ]; then
      mrow "gpt2-4ranks-${q%%:*}-defaults" 90 "" 4 "$g" "${one[@]}" ${q#*:}
      mrow "gpt2-4ranks-${q%%:*}-2x1" 90 "$tuned" 4 "$g" "${one[@]}" ${q#*:}
    fi
  done
  for q in "fixed8:--quantizer fixed8" "fixed4:--quantizer fixed4"; do
    # shellcheck disable=SC2086
    mrow "heldout-4ranks-${q%%:*}-defaults" 90 "" 4 "$data/heldout" "${one[@]}" ${q#*:}
    # shellcheck disable=SC2086
    mrow "heldout-4ranks-${q%%:*}-2x1" 90 "$tuned" 4 "$data/heldout" "${one[@]}" ${q#*:}
  done
  for n in 2 3; do
    mrow "heldout-${n}ranks-rel-defaults" 90 "" "$n" "$data/heldout" "${sweep[@]}" --rel 1e-3
    mrow "heldout-${n}ranks-rel-2x1" 90 "$tuned" "$n" "$data/heldout" "${sweep[@]}" --rel 1e-3
  done
  [ -d "$data/tune" ] && mrow tune-4ranks-rel-defaults 90 "" 4 "$data/tune" "${one[@]}" --rel 1e-3
  codec all "$data"  # every field: the rates behind the earlier runs of benchmarks/results
  codecs=()
  for f in "$res/$v"/codec-*.json; do [ -s "$f" ] && codecs+=(--codec "$f"); done
  runs=()
  for f in "$res/$v"/*.jsonl; do [ -s "$f" ] && runs+=("$f"); done
  if [ ${#codecs[@]} -gt 0 ] && [ ${#runs[@]} -gt 0 ]; then
    inputs=()
    for f in "${runs[@]}"; do
      case $(basename "$f") in
        heldout-*) inputs+=(--codec-input "$f=concat(6 fields") ;;
        tune-*) inputs+=(--codec-input "$f=concat(13 fields") ;;
        gpt2-*) inputs+=(--codec-input "$f=concat(1 fields") ;;
      esac
    done
    step "$v/check" 60 python3 "$src/benchmarks/speedup_model.py" validate "${codecs[@]}" "${inputs[@]}" \
      --json "$res/$v/validation.json" "${runs[@]}"
  fi
fi

# --- --sanitize ------------------------------------------------------------------------------------
if has_mode sanitize; then
  if ! command -v compute-sanitizer >/dev/null 2>&1; then
    note sanitize "compute-sanitizer not found"
  else
    cs=(compute-sanitizer --error-exitcode 1 --print-limit 20)
    gt=$bin/test/gpu_tests
    tests=${SANITIZE_TESTS:-~[large]~[perf]}
    step sanitize/memcheck 900 "${cs[@]}" --tool memcheck "$gt" "$tests"
    step sanitize/synccheck 900 "${cs[@]}" --tool synccheck "$gt" "$tests"
    # racecheck is some 100 times slower: the corruption and alignment cases, every coder's round
    # trips (one shard each, in parallel) and the zero_run tile tests, unless SANITIZE_RACE_TESTS.
    bx="device codec is bit-exact with the host reference - combo<"
    if [ -n "${SANITIZE_RACE_TESTS:-}" ]; then
      race=("$SANITIZE_RACE_TESTS")
    else
      race=("device decoder reports corrupted and mismatched chunks,device codec reads inputs at any element-aligned address"
        "[zero_run]~[perf]" "${bx}RelAd*" "${bx}RelFL*" "${bx}RelZR*" "${bx}RelHuf*" "${bx}Abs*")
    fi
    mkdir -p "$logs/sanitize"
    # shellcheck disable=SC2016  # the script's own variables
    step sanitize/racecheck 900 bash -c 'dir=$1 gt=$2 pids=() i=0 rc=0
      shift 2
      for spec in "$@"; do
        compute-sanitizer --error-exitcode 1 --print-limit 20 --tool racecheck "$gt" "$spec" >"$dir/racecheck-$i.log" 2>&1 &
        pids+=($!) i=$((i + 1))
      done
      for p in "${pids[@]}"; do wait "$p" || rc=1; done
      grep -H -E "RACECHECK SUMMARY|^(All tests passed|test cases)" "$dir"/racecheck-*.log
      exit $rc' _ "$logs/sanitize" "$gt" "${race[@]}"
    # One 4-rank run of test_corruption under each tool. NCCL's kernels are NCCL's to check (and
    # slow under the tools): left out where the option is; so are API errors, which NCCL's own
    # probes for kernels of other architectures raise.
    skip_nccl=()
    compute-sanitizer --help 2>/dev/null | grep -q -- '--kernel-name-exclude' && skip_nccl=(--kernel-name-exclude kns=nccl)
    for tool in memcheck racecheck synccheck; do
      api=(); [ $tool = memcheck ] && api=(--report-api-errors no)
      step sanitize/$tool-4ranks 600 "$src/scripts/emulated_cluster.sh" -n 4 --no-mps --timeout 590 \
        --log-dir "$logs/sanitize/$tool-4ranks.ranks" -- "${cs[@]}" --tool $tool "${api[@]}" "${skip_nccl[@]}" \
        "$bin/test/cluster/test_corruption"
    done
  fi
fi

# --- summary and archive ---------------------------------------------------------------------------
{
  echo
  echo "=== rows at 256 MiB and 1 GiB (NCCL time algbw busbw #wrong | ncclz time algbw busbw #wrong | speedup ratio max_err bound)"
  for f in $(cd "$logs" && find . -name '*.log' | sort); do
    rows=$(grep -E '^ +(268435456|1073741824) ' "$logs/$f" | sed 's/  */ /g')
    [ -n "$rows" ] && printf '%s\n%s\n' "-- ${f#./}" "$rows"
  done
  [ -f "$res/codec/adaptive-overhead.txt" ] && { echo "=== Adaptive's overhead"; cat "$res/codec/adaptive-overhead.txt"; }
  grep -h -E "^(OK|FAILED):" "$logs"/codec/*.log 2>/dev/null | sed 's/^/codec: /'
  grep -h -E "ERROR SUMMARY|RACECHECK SUMMARY" "$logs"/sanitize/*.log 2>/dev/null | sed 's/^/sanitize: /'
  grep -h "Route check" "$logs"/collectives-4ranks/route-check-*.log 2>/dev/null | sed 's/^# */route: /'
  echo "=== $failed step(s) failed; total $((SECONDS - start)) s"
} >>"$summary"
tar -czf "$out/gpu-run.tgz" -C "$out" logs results summary.txt
[ "${KEEP_FILES:-0}" = 1 ] || rm -rf "$logs" "$res"
cat "$summary"
echo "(everything: $out/gpu-run.tgz)"
[ "$failed" -eq 0 ]
