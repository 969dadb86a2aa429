# Sourced by the device scripts that must end inside the device tool's limit: `step NAME SECONDS
# CMD...` runs CMD with at most SECONDS and at most what is left of LIMIT_S since sourcing, output
# in $logs/NAME.log, one line per step in $logs/summary.txt; a step with no time left is skipped
# and says so, as does one named in SKIP_STEPS (space-separated names). The caller sets $logs
# before sourcing.
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
