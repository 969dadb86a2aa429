# Sourced by the device scripts that must end inside the device tool's limit: `step NAME SECONDS
# CMD...` runs CMD with at most SECONDS and at most what is left of LIMIT_S since sourcing, output
# in $logs/NAME.log, one line per step in $logs/summary.txt; a step with no time left is skipped
# and says so, as does one named in SKIP_STEPS (space-separated names). The caller sets
# $default_limit, and $logs if not $out/logs, where $out is $OUT or ./device-out.
out=${out:-${OUT:-$PWD/device-out}}
logs=${logs:-$out/logs}
mkdir -p "$logs"
limit=${LIMIT_S:-$default_limit}
start=$SECONDS
left() { echo $((limit - (SECONDS - start))); }
step() {
  local name=$1 max=$2
  shift 2
  local t
  case " ${SKIP_STEPS:-} " in *" $name "*)
    echo "=== $name: skipped (SKIP_STEPS)" | tee -a "$logs/summary.txt"
    return 0 ;;
  esac
  t=$(left)
  [ "$t" -gt "$max" ] && t=$max
  if [ "$t" -le 5 ]; then
    echo "=== $name: skipped, out of time" | tee -a "$logs/summary.txt"
    return 124
  fi
  local s=$SECONDS
  timeout "$t" "$@" >"$logs/$name.log" 2>&1
  local rc=$?
  echo "=== $name: rc=$rc in $((SECONDS - s)) s (limit $t s)" | tee -a "$logs/summary.txt"
  return $rc
}

# For the sweeps over a prebuilt tree (perf_env_sweep.sh, pipeline_soak.sh): $build is $BUILD or
# prebuilt, whose libraries go on the library path.
use_build() {
  build=${BUILD:-prebuilt}
  if [ "$build" = prebuilt ]; then export LD_LIBRARY_PATH="$PWD/prebuilt/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"; fi
}
# The end of a sweep: summary and table printed, the table kept, the logs packed (the device
# tool brings back few files).
finish_sweep() {
  cat "$logs/summary.txt" "$logs/table.txt"
  cp "$logs/table.txt" "$out/table.txt"
  tar -czf "$out/results.tgz" -C "$out" logs 2>/dev/null && rm -rf "$logs"
}
