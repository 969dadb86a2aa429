#!/usr/bin/env bash
# ncclz-perf on a machine with a GPU per rank (2 or more GPUs), in one call: builds ncclz-perf only,
# then runs every collective from 4 KB to 1 GB (x2) at REL 1e-3, fp32 unless said:
#   nvlink-fallback    one GPU per rank, NCCL's own transports (NVLink), the library's fallback
#   nvlink-compressed  the same with every call compressed (--fallback-below 0), phases timed
#   nvlink-bf16        nvlink-fallback in bfloat16
#   socket             one GPU per rank, but NCCL forced onto sockets over loopback, as between nodes
# Each run's table goes to $OUT/NAME.log and its JSON lines to $OUT/NAME.jsonl; the large sizes and
# the summary lines are printed last.
#
#   run(command="bash scripts/device_run_multigpu.sh", kind="nvidia-h200-x2", carry=[".deps", "data"])
#
# Options: -n N ranks (default: every GPU nvidia-smi lists), --quick (stop at 64 MB). Real data
# when ./data exists (tools/make_datasets.sh data), a generated smooth field otherwise.
set -uo pipefail
out=${OUT:-$PWD/device-out}
mkdir -p "$out"
nranks=""
max_bytes=1G
while [ "$#" -gt 0 ]; do
  case "$1" in
    -n) nranks=${2:?-n needs a rank count}; shift 2 ;;
    --quick) max_bytes=64M; shift ;;
    *) echo "device_run_multigpu: unknown option $1 (-n N, --quick)" >&2; exit 2 ;;
  esac
done

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"
nvidia-smi topo -m >"$out/topo.txt" 2>&1
gpus=$(nvidia-smi -L | grep -c '^GPU')
nranks=${nranks:-$gpus}
if ((nranks < 2 || nranks > gpus)); then
  echo "device_run_multigpu: needs 2..$gpus ranks (one GPU each), got $nranks" >&2
  exit 2
fi

build="build-device"
if [ ! -f "$build/build.ninja" ]; then
  meson setup "$build" -Dcatch2_dir="$PWD/.deps" -Dgpu_arch=sm_90 --buildtype=release >"$out/setup.log" 2>&1 ||
    { cat "$out/setup.log"; exit 1; }
fi
ninja -C "$build" benchmarks/ncclz-perf >"$out/build.log" 2>&1 || { tail -50 "$out/build.log"; exit 1; }

perf_args=(-C "allreduce,reduce_scatter,allgather,broadcast,reduce,alltoall" -b 4K -e "$max_bytes" -f 2 -n 10 -w 3 --rel 1e-3)
[ -d data ] && perf_args+=(--data data)
runs=()
run_perf() { # NAME CLUSTER-OPTIONS... -- NCCLZ-PERF-OPTIONS...
  local name=$1
  shift
  local cluster=()
  while [ "$1" != -- ]; do cluster+=("$1"); shift; done
  shift
  runs+=("$name")
  scripts/emulated_cluster.sh -n "$nranks" --timeout 240 "${cluster[@]}" -- "$PWD/$build/benchmarks/ncclz-perf" \
    "${perf_args[@]}" --json "$out/$name.jsonl" "$@" >"$out/$name.log" 2>&1
}
rc=0
run_perf nvlink-fallback --real-gpus -- || rc=1
run_perf nvlink-compressed --real-gpus -- --fallback-below 0 --phases || rc=1
run_perf nvlink-bf16 --real-gpus -- -d bfloat16 || rc=1
run_perf socket --real-gpus --socket -- || rc=1

if python3 -c 'import matplotlib' 2>/dev/null; then
  jsons=()
  for name in "${runs[@]}"; do jsons+=("$out/$name.jsonl"); done
  python3 benchmarks/plot_perf.py --out "$out" "${jsons[@]}" >"$out/plot.log" 2>&1
fi

# Collective names, rows of 64 MB and more, and nccl-tests' closing lines.
for name in "${runs[@]}"; do
  echo "=== $name ($nranks ranks)"
  awk '/^# [a-z_]+$/ || /^# (Out of bounds|Avg bus|Geomean)/ || /^emulated_cluster: .*(fail|exited|timeout)/ || ($1 ~ /^[0-9]+$/ && $1 >= 67108864)' \
    "$out/$name.log"
done
# The device tool brings back only a few files: everything goes back as one archive.
tar czf /tmp/device-results.tgz -C "$out" . && rm -rf "${out:?}"/* && mv /tmp/device-results.tgz "$out/results.tgz"
exit $rc
