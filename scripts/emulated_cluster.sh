#!/usr/bin/env bash
# Runs N copies of a command as the N ranks of one NCCL job on this machine.
#
#   scripts/emulated_cluster.sh -n N [options] -- CMD [ARGS...]
#
# Default ("emulated") mode, for one GPU shared by all ranks (docs/benchmarks.md, "Hardware and
# method"): each rank gets its own NCCL_HOSTID, so NCCL treats every process as a node of its own,
# and the socket transport on loopback is forced, so ranks talk TCP as nodes do over Ethernet. An
# MPS control daemon is started (when nvidia-cuda-mps-control exists and starts) so the ranks'
# kernels run concurrently instead of time-slicing the GPU.
#
# --real-gpus (alias --gpus-per-rank), for a machine with a GPU per rank: rank r uses GPU r
# (NCCLZ_DEVICE=r), NCCL picks its transports (NVLink, P2P, SHM) and no MPS is started; --socket
# forces the emulated-cluster socket settings in this mode too.
#
# --ranks-per-node K groups ranks into logical nodes of K consecutive ranks (N must be a multiple
# of K), for ncclz::HierarchicalCommunicator: rank r gets NCCLZ_NODE=r/K and LOCAL_RANK=r%K
# (LOCAL_WORLD_SIZE=K, as torchrun sets them per node). With --real-gpus the ranks of a node also
# share NCCL_HOSTID=node<r/K>, so NCCL joins them by NVLink/P2P (with --socket: sockets between
# nodes, NVLink/P2P still inside them); in emulated mode every rank keeps its own NCCL_HOSTID (one GPU, all
# sockets) and only NCCLZ_NODE forms the nodes, so the hierarchical code paths all run.
#
# Every rank gets: NCCLZ_RANK, NCCLZ_NRANKS, NCCLZ_BOOTSTRAP_FILE (a fresh path per launch; rank 0
# writes the ncclUniqueId there, see include/ncclz/bootstrap.hpp), NCCL_NVLS_ENABLE=0 and
# torchrun's RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT; in
# socket mode also NCCL_HOSTID=node<r> NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_NET=Socket
# NCCL_SOCKET_IFNAME=lo; with MPS, CUDA_MPS_PIPE_DIRECTORY, CUDA_MPS_LOG_DIRECTORY and
# CUDA_DEVICE_MAX_CONNECTIONS=8 unless set (hardware queues per rank, see start_mps). Other
# variables (NCCL_DEBUG, NCCL_SOCKET_NTHREADS, ...) pass through from the caller.
#
# --mpi starts the ranks with mpirun instead (Open MPI's or another that sets OMPI_COMM_WORLD_RANK,
# PMIX_RANK or PMI_RANK): every rank gets the same per-rank settings as above but neither
# NCCLZ_RANK, NCCLZ_NRANKS nor NCCLZ_BOOTSTRAP_FILE, so the program takes its rank from MPI and,
# when built with -Dmpi, exchanges NCCL's id through MPI_COMM_WORLD (include/ncclz/bootstrap.hpp).
# As root, mpirun gets --allow-run-as-root.
#
# Rank 0's output goes to this terminal, rank r's to DIR/rank<r>.log. Exit status: 0 when all
# ranks exit 0; the status of the first rank to fail otherwise (the others are stopped after a
# grace period, and the tail of each failed rank's log is printed); 77 when every rank exits 77
# (no GPU: meson's "skipped"); 124 when --timeout passes first. MPS is stopped and temporary files
# are removed however the script ends (short of SIGKILL).
set -uo pipefail

prog=emulated_cluster
note() { printf '%s: %s\n' "$prog" "$*" >&2; }
die() { note "$*"; exit 2; }

usage() {
  cat <<'USAGE'
usage: scripts/emulated_cluster.sh -n N [options] -- CMD [ARGS...]
  -n, --nranks N         number of ranks (processes)
  --timeout SEC          stop everything after SEC seconds and exit 124 (default: no limit)
  --log-dir DIR          where rank<r>.log of ranks 1..N-1 go (default: a temporary folder,
                         removed when every rank succeeds, kept after a failure)
  --grace SEC            after a rank fails, how long the others get to exit before they are
                         stopped (default 10)
  --no-mps               do not start MPS (emulated mode)
  --real-gpus, --gpus-per-rank
                         one GPU per rank: NCCLZ_DEVICE=r, NCCL's own transports, no MPS
  --socket               with --real-gpus: force the socket transport on loopback anyway
  --ranks-per-node K     logical nodes of K consecutive ranks: NCCLZ_NODE=r/K, LOCAL_RANK=r%K
                         (--real-gpus: NCCL_HOSTID=node<r/K> shared by a node's ranks)
  --mpi                  start the ranks with mpirun; they take rank and id from MPI
  -h, --help             this text
USAGE
}

nranks=""
timeout_s=0
grace_s=10
log_dir=""
use_mps=1
real_gpus=0
force_socket=0
ranks_per_node=0
use_mpi=0
as_mpi_rank=""  # internal: this process is one rank under mpirun; the value is the run's folder
need_value() {
  if [ "$#" -lt 2 ] || [ -z "$2" ]; then die "option $1 needs a value (see --help)"; fi
}
while [ "$#" -gt 0 ]; do
  case "$1" in
    -n | --nranks) need_value "$@"; nranks=$2; shift 2 ;;
    -n*) nranks=${1#-n}; shift ;;
    --nranks=*) nranks=${1#*=}; shift ;;
    --timeout) need_value "$@"; timeout_s=$2; shift 2 ;;
    --timeout=*) timeout_s=${1#*=}; shift ;;
    --log-dir) need_value "$@"; log_dir=$2; shift 2 ;;
    --log-dir=*) log_dir=${1#*=}; shift ;;
    --grace) need_value "$@"; grace_s=$2; shift 2 ;;
    --grace=*) grace_s=${1#*=}; shift ;;
    --no-mps) use_mps=0; shift ;;
    --real-gpus | --gpus-per-rank) real_gpus=1; shift ;;
    --socket) force_socket=1; shift ;;
    --ranks-per-node) need_value "$@"; ranks_per_node=$2; shift 2 ;;
    --ranks-per-node=*) ranks_per_node=${1#*=}; shift ;;
    --mpi) use_mpi=1; shift ;;
    --as-mpi-rank) need_value "$@"; as_mpi_rank=$2; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    --) shift; break ;;
    *) die "unknown option '$1' (the command goes after --; see --help)" ;;
  esac
done
[ "$#" -gt 0 ] || die "no command given (put it after --; see --help)"
[[ $nranks =~ ^[1-9][0-9]*$ ]] || die "-n needs a positive rank count, got '${nranks}'"
[[ $timeout_s =~ ^[0-9]+$ ]] || die "--timeout needs whole seconds, got '${timeout_s}'"
[[ $grace_s =~ ^[0-9]+$ ]] || die "--grace needs whole seconds, got '${grace_s}'"
if [ "$ranks_per_node" != 0 ]; then
  [[ $ranks_per_node =~ ^[1-9][0-9]*$ ]] || die "--ranks-per-node needs a positive rank count, got '${ranks_per_node}'"
  ((nranks % ranks_per_node == 0)) || die "--ranks-per-node $ranks_per_node does not divide -n $nranks: every node needs the same number of ranks"
fi
socket_mode=1
if ((real_gpus)); then
  socket_mode=$force_socket
  use_mps=0
elif ((force_socket)); then
  note "--socket only matters with --real-gpus: the emulated cluster always uses sockets"
fi

# rank_env=(...): what rank $1 gets besides NCCLZ_RANK, in either launcher.
set_rank_env() {
  local r=$1 node
  if ((ranks_per_node > 0)); then
    node=$((r / ranks_per_node))
    rank_env=(RANK="$r" LOCAL_RANK="$((r % ranks_per_node))" NCCLZ_NODE="$node")
    if ((real_gpus)); then
      rank_env+=(NCCL_HOSTID="node$node")  # one host per node: NVLink/P2P inside (unless --socket)
    else
      rank_env+=(NCCL_HOSTID="node$r")     # one GPU: every rank its own host, sockets everywhere
    fi
  else
    rank_env=(RANK="$r" LOCAL_RANK="$r")
    ((socket_mode)) && rank_env+=(NCCL_HOSTID="node$r")
  fi
  ((real_gpus)) && rank_env+=(NCCLZ_DEVICE="$r")
}

# One rank under mpirun (the launcher below starts this script so): its settings, its log, and
# its exit status in the run's folder, where the launcher reads it. Always exits 0, so that mpirun
# does not stop the other ranks before the launcher's own grace period and verdict.
if [ -n "$as_mpi_rank" ]; then
  r=${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-${PMI_RANK:-}}}
  [[ $r =~ ^[0-9]+$ ]] || die "--as-mpi-rank: no MPI rank in the environment (OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK)"
  set_rank_env "$r"
  if ((r == 0)); then
    env "${rank_env[@]}" "$@" </dev/null
  else
    env "${rank_env[@]}" "$@" </dev/null >"$MPI_LOG_DIR/rank$r.log" 2>&1
  fi
  echo "$?" >"$as_mpi_rank/rc.$r"
  exit 0
fi

# --- state, and the cleanup that runs however we leave --------------------------------------------
work=""
mps_pipe=""
mps_log=""
mps_started=0
own_log_dir=0

declare -a pids=()      # pids[r]: rank r's process (also its process group: started with setsid)
declare -A rank_of=()   # pid -> rank, for ranks not reaped yet
declare -a rc_of=()     # rc_of[r]: rank r's exit status once reaped
use_setsid=0
command -v setsid >/dev/null 2>&1 && use_setsid=1

signal_ranks() { # SIGNAL: to every rank still running (its whole process group when we can)
  local pid
  for pid in "${!rank_of[@]}"; do
    if ((use_setsid)); then
      kill -s "$1" -- "-$pid" 2>/dev/null || kill -s "$1" "$pid" 2>/dev/null
    else
      kill -s "$1" "$pid" 2>/dev/null
    fi
  done
}


# shellcheck disable=SC2317  # reached from the EXIT trap
stop_mps() {
  ((mps_started)) || return 0
  mps_started=0
  local pid_file=$mps_pipe/nvidia-cuda-mps-control.pid daemon="" i
  [ -r "$pid_file" ] && daemon=$(cat "$pid_file" 2>/dev/null)
  if echo quit | CUDA_MPS_PIPE_DIRECTORY=$mps_pipe CUDA_MPS_LOG_DIRECTORY=$mps_log nvidia-cuda-mps-control >/dev/null 2>&1; then
    note "MPS: stopped"
  else
    note "MPS: 'quit' to the control daemon failed (pipe $mps_pipe); it may still be running"
  fi
  # Let the daemon finish before its folders go away.
  if [[ $daemon =~ ^[0-9]+$ ]]; then
    for ((i = 0; i < 100; i++)); do
      kill -0 "$daemon" 2>/dev/null || break
      sleep 0.1
    done
  else
    sleep 0.5
  fi
}

final_rc=""
# shellcheck disable=SC2317  # the EXIT trap
cleanup() {
  local rc=${final_rc:-$?} i
  trap - EXIT INT TERM HUP
  if ((${#rank_of[@]} > 0)); then
    signal_ranks TERM
    for ((i = 0; i < 30; i++)); do
      [ -z "$(jobs -pr)" ] && break
      sleep 0.1
    done
    if [ -n "$(jobs -pr)" ]; then
      signal_ranks KILL
      for ((i = 0; i < 20; i++)); do
        [ -z "$(jobs -pr)" ] && break
        sleep 0.1
      done
    fi
  fi
  stop_mps
  [ -n "$work" ] && rm -rf "$work"
  if ((own_log_dir)); then
    if ((rc == 0 || rc == 77)); then
      rm -rf "$log_dir"
    else
      note "rank logs kept in $log_dir"
    fi
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'note "interrupted"; final_rc=130; exit 130' INT
trap 'note "terminated"; final_rc=143; exit 143' TERM
trap 'final_rc=129; exit 129' HUP

work=$(mktemp -d "${TMPDIR:-/tmp}/ncclz-cluster.XXXXXX") || die "cannot make a temporary folder"
bootstrap_file=$work/bootstrap.id  # does not exist yet: rank 0 creates it
mps_pipe=$work/mps-pipe
mps_log=$work/mps-log
if [ -z "$log_dir" ]; then
  log_dir=$(mktemp -d "${TMPDIR:-/tmp}/ncclz-cluster-logs.XXXXXX") || die "cannot make a log folder"
  own_log_dir=1
else
  mkdir -p "$log_dir" || die "cannot make --log-dir '$log_dir'"
fi

# --- MPS ------------------------------------------------------------------------------------------
start_mps() {
  if ! command -v nvidia-cuda-mps-control >/dev/null 2>&1; then
    note "MPS: nvidia-cuda-mps-control not found; the ranks will time-slice the GPU"
    return
  fi
  if command -v pgrep >/dev/null 2>&1 && pgrep -x nvidia-cuda-mps-control >/dev/null 2>&1; then
    note "MPS: another MPS control daemon is running on this machine; starting our own anyway"
  fi
  mkdir -p "$mps_pipe" "$mps_log"
  local err=$work/mps-start.err i
  if CUDA_MPS_PIPE_DIRECTORY=$mps_pipe CUDA_MPS_LOG_DIRECTORY=$mps_log nvidia-cuda-mps-control -d >"$err" 2>&1; then
    mps_started=1
    for ((i = 0; i < 50; i++)); do
      [ -e "$mps_pipe/control" ] && break
      sleep 0.1
    done
    [ -e "$mps_pipe/control" ] || note "MPS: daemon started but $mps_pipe/control did not appear; going on"
    # An MPS client gets few hardware work queues by default, so its streams alias onto the same
    # queue and wait for each other's work in launch order: a pipelined reduction's sends then
    # wait behind the coding of later parts (measured: 4 parts 24.5 ms by default, 14.3 ms with 8
    # queues; 32 leaves too few for 4 clients). A caller's own setting is kept.
    export CUDA_DEVICE_MAX_CONNECTIONS=${CUDA_DEVICE_MAX_CONNECTIONS:-8}
    export CUDA_MPS_PIPE_DIRECTORY=$mps_pipe CUDA_MPS_LOG_DIRECTORY=$mps_log
    note "MPS: started (CUDA_MPS_PIPE_DIRECTORY=$mps_pipe, CUDA_DEVICE_MAX_CONNECTIONS=$CUDA_DEVICE_MAX_CONNECTIONS)"
  else
    note "MPS: could not start the control daemon ($(tr '\n' ' ' <"$err")); the ranks will time-slice the GPU"
  fi
}
if ((use_mps)); then
  start_mps
elif ((!real_gpus)); then
  note "MPS: off (--no-mps); the ranks will time-slice the GPU"
fi

# --- launch ---------------------------------------------------------------------------------------
# torch.distributed's env:// variables as torchrun sets them, so PyTorch scripts run unchanged;
# a free port is picked unless the caller set MASTER_PORT.
master_port=${MASTER_PORT:-$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null || echo 29500)}
local_world=$nranks
((ranks_per_node > 0)) && local_world=$ranks_per_node
common_env=(NCCLZ_NRANKS="$nranks" NCCLZ_BOOTSTRAP_FILE="$bootstrap_file" NCCL_NVLS_ENABLE=0
            WORLD_SIZE="$nranks" LOCAL_WORLD_SIZE="$local_world" MASTER_ADDR=127.0.0.1 MASTER_PORT="$master_port")
if ((socket_mode && real_gpus && ranks_per_node > 0)); then
  # Nodes of several GPUs: NVLink/P2P inside a node (one NCCL_HOSTID), sockets between nodes.
  common_env+=(NCCL_NET=Socket NCCL_SOCKET_IFNAME=lo)
elif ((socket_mode)); then
  common_env+=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_NET=Socket NCCL_SOCKET_IFNAME=lo)
fi
if ((real_gpus)); then
  mode="one GPU per rank$( ((socket_mode)) && echo ', sockets on loopback')"
  ((socket_mode && ranks_per_node > 0)) && mode="one GPU per rank, sockets on loopback between nodes"
  if command -v nvidia-smi >/dev/null 2>&1; then
    gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
    ((gpus < nranks)) && note "warning: $nranks ranks but nvidia-smi lists $gpus GPU(s)"
  fi
  if ((!socket_mode)); then
    # NCCL's own transports are the point of this mode: say so when the caller's environment
    # turns them off.
    for var in NCCL_P2P_DISABLE NCCL_SHM_DISABLE NCCL_NET NCCL_HOSTID; do
      [ -n "${!var:-}" ] && note "warning: $var=${!var} is set: NCCL may not use NVLink/P2P in this mode"
    done
  fi
else
  mode="emulated: one node per process, sockets on loopback, MPS $( ((mps_started)) && echo on || echo off)"
fi
((ranks_per_node > 0)) && mode="$mode; $((nranks / ranks_per_node)) logical node(s) of $ranks_per_node rank(s) (NCCLZ_NODE)"
note "$nranks rank(s), $mode; rank 0 prints here, ranks 1..$((nranks - 1)) log to $log_dir"

launcher=(env)
((use_setsid)) && launcher=(setsid env)
mpirun_pid=""
if ((use_mpi)); then
  # One mpirun; each of its processes is this script again (--as-mpi-rank), which sets the rank's
  # variables from MPI's rank and reports its exit status through a file.
  mpirun_cmd=$(command -v mpirun || command -v mpiexec) || die "--mpi: neither mpirun nor mpiexec is on PATH"
  mpi_env=()
  for kv in "${common_env[@]}"; do
    case $kv in NCCLZ_NRANKS=* | NCCLZ_BOOTSTRAP_FILE=*) ;; *) mpi_env+=("$kv") ;; esac
  done
  mpi_env+=(MPI_LOG_DIR="$log_dir")
  mpi_args=(-np "$nranks")
  if "$mpirun_cmd" --version 2>&1 | grep -q "Open MPI"; then
    # All ranks on this machine, whatever its core count; root needs Open MPI's consent.
    mpi_args+=(--oversubscribe)
    ((EUID == 0)) && mpi_args+=(--allow-run-as-root)
  fi
  # Exported explicitly too, as mpirun needs for ranks on other hosts.
  for kv in "${mpi_env[@]}"; do mpi_args+=(-x "${kv%%=*}"); done
  for var in $(compgen -e); do
    case $var in NCCL_* | NCCLZ_* | CUDA_*) [[ " ${mpi_args[*]} " == *" $var "* ]] || mpi_args+=(-x "$var") ;; esac
  done
  rank_opts=(-n "$nranks")
  ((real_gpus)) && rank_opts+=(--real-gpus)
  ((force_socket)) && rank_opts+=(--socket)
  ((ranks_per_node > 0)) && rank_opts+=(--ranks-per-node "$ranks_per_node")
  "${launcher[@]}" "${mpi_env[@]}" "$mpirun_cmd" "${mpi_args[@]}" bash "$0" --as-mpi-rank "$work" "${rank_opts[@]}" -- "$@" </dev/null &
  mpirun_pid=$!
  rank_of[$mpirun_pid]=mpirun
else
  for ((r = 0; r < nranks; r++)); do
    set_rank_env "$r"
    rank_env=(NCCLZ_RANK="$r" "${rank_env[@]}")
    if ((r == 0)); then
      "${launcher[@]}" "${common_env[@]}" "${rank_env[@]}" "$@" </dev/null &
    else
      "${launcher[@]}" "${common_env[@]}" "${rank_env[@]}" "$@" </dev/null >"$log_dir/rank$r.log" 2>&1 &
    fi
    pids[r]=$!
    rank_of[${pids[r]}]=$r
  done
fi

# --- watch ----------------------------------------------------------------------------------------
# Polls rather than `wait -n`: bash drops finished background jobs from its job table at odd
# moments, after which `wait -n PID` no longer knows them, while `wait PID` still returns their
# saved status. Bash reaps its children as they exit, so `kill -0` fails once a rank is gone.
# States: run (all well so far; the deadline is --timeout), grace (a rank failed; the deadline ends
# the grace period), term (SIGTERM sent; SIGKILL at the deadline), killed (SIGKILL sent).
state=run
timed_out=0
failures=()   # ranks that exited non-zero on their own, in the order they did
deadline=-1
((timeout_s > 0)) && deadline=$((SECONDS + timeout_s))

record_exit() { # RANK STATUS
  local r=$1 rc=$2
  rc_of[r]=$rc
  if ((rc != 0)) && [[ $state == run || $state == grace ]]; then
    failures+=("$r")
    if [ "$state" = run ]; then
      note "rank $r exited with status $rc$( ((rc == 77)) && echo " (skip)"); giving the others ${grace_s} s to finish"
      state=grace
      deadline=$((SECONDS + grace_s))
    fi
  fi
}

mpirun_rc=""
reap() { # records every rank that has exited since the last call
  local pid r rc
  for pid in "${!rank_of[@]}"; do
    kill -0 "$pid" 2>/dev/null && continue
    wait "$pid"
    rc=$?
    r=${rank_of[$pid]}
    unset "rank_of[$pid]"
    if [ "$r" = mpirun ]; then mpirun_rc=$rc; else record_exit "$r" "$rc"; fi
  done
  if ((use_mpi)); then # after mpirun's own check: a rank writes its file before mpirun can end
    for ((r = 0; r < nranks; r++)); do
      [ -z "${rc_of[r]:-}" ] && [ -s "$work/rc.$r" ] && record_exit "$r" "$(<"$work/rc.$r")"
    done
  fi
}

while :; do
  reap
  ((${#rank_of[@]} == 0)) && break
  if ((deadline >= 0 && SECONDS >= deadline)); then
    case $state in
      run)
        timed_out=1
        note "timeout: ${timeout_s} s passed; stopping all ranks"
        signal_ranks TERM; state=term; deadline=$((SECONDS + 5)) ;;
      grace)
        note "grace period over; stopping the ranks still running"
        signal_ranks TERM; state=term; deadline=$((SECONDS + 5)) ;;
      term)
        note "ranks still running 5 s after SIGTERM; sending SIGKILL"
        signal_ranks KILL; state=killed; deadline=$((SECONDS + 5)) ;;
      killed)
        note "ranks survive SIGKILL (stuck in the driver?); giving up on them"
        break ;;
    esac
  fi
  sleep 0.2
done

# A rank that mpirun never started, or that it stopped, left no status.
if ((use_mpi && !timed_out)); then
  for ((r = 0; r < nranks; r++)); do
    if [ -z "${rc_of[r]:-}" ]; then
      note "rank $r reported no exit status (mpirun exited with ${mpirun_rc:-?})"
      rc_of[r]=${mpirun_rc:-1}
      ((rc_of[r] == 0)) && rc_of[r]=1
      failures+=("$r")
    fi
  done
fi

# --- verdict --------------------------------------------------------------------------------------
show_log() { # RANK LINES
  (($1 == 0)) && return
  local f=$log_dir/rank$1.log
  [ -s "$f" ] || { note "rank $1's log ($f) is empty"; return; }
  printf -- '---- rank %d: last %d lines of %s ----\n' "$1" "$2" "$f" >&2
  tail -n "$2" "$f" >&2
  printf -- '---- end of rank %d ----\n' "$1" >&2
}

if ((timed_out)); then
  for ((r = 1; r < nranks; r++)); do show_log "$r" 15; done
  final_rc=124
  exit 124
fi
if ((${#failures[@]} == 0)); then
  note "all $nranks rank(s) exited 0"
  final_rc=0
  exit 0
fi

skipped=0
for ((r = 0; r < nranks; r++)); do
  [ "${rc_of[r]:-}" = 77 ] && skipped=$((skipped + 1))
done
if ((skipped == nranks)); then
  note "every rank exited 77: skipped (no usable GPU?)"
  final_rc=77
  exit 77
fi

first_rc=""
for r in "${failures[@]}"; do
  note "rank $r failed with exit status ${rc_of[r]}"
  show_log "$r" 40
  [ -z "$first_rc" ] && [ "${rc_of[r]}" != 77 ] && first_rc=${rc_of[r]}
done
for ((r = 0; r < nranks; r++)); do
  [ -n "${rc_of[r]:-}" ] || note "rank $r did not exit"
done
if [ -z "$first_rc" ]; then
  note "some ranks exited 77 (skip) and others did not: reporting a failure"
  first_rc=1
fi
((mps_started)) && note "(MPS was on; rerun with --no-mps to rule it out)"
final_rc=$first_rc
exit "$first_rc"
