# Background build chains and timed phases for .ci/run (sourced, not executed; bash >= 4.3).
#
# A chain runs make targets one after another in the background, its output in $CI_LOGS/<chain>.log, and marks
# each target it finished; the foreground waits for a whole chain (wait_chain) or for one of its targets
# (wait_step), and a failed chain stops the run with its log. stop_chains (the EXIT trap) ends chains still
# running, builds included: each chain is a process group of its own. CI_MAKE (default `make`) runs the targets.

CI_LOGS=${CI_LOGS:-$(mktemp -d -t ballast-ci.XXXXXX)}
CI_MAKE=${CI_MAKE:-make}
CI_BEGAN=${CI_BEGAN:-$SECONDS}
declare -A CHAIN_PID=()
declare -A CHAIN_STATUS=()
TIMINGS=()

clock() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

# phase NAME COMMAND...: COMMAND in the foreground under a banner; its wall time goes to the summary.
phase() {
  local name=$1 began=$SECONDS
  shift
  echo "--- $name (at $(clock $((SECONDS - CI_BEGAN))))"
  "$@"
  TIMINGS+=("$(printf '%-28s %s' "$name" "$(clock $((SECONDS - began)))")")
  echo "--- $name: $(clock $((SECONDS - began)))"
}

# start_chain NAME TARGET...: run `$CI_MAKE TARGET` for each TARGET in order, in the background.
start_chain() {
  local name=$1
  shift
  rm -f "$CI_LOGS/$name".*.done # a previous run's marks
  set -m # job control for this one job: the chain gets its own process group, so stop_chains reaches its builds
  (
    trap - EXIT
    for target in "$@"; do
      began=$SECONDS
      echo "--- $CI_MAKE $target"
      $CI_MAKE "$target" || exit $?
      echo "--- $target: $(clock $((SECONDS - began)))"
      : >"$CI_LOGS/$name.$target.done"
    done
  ) </dev/null >"$CI_LOGS/$name.log" 2>&1 &
  CHAIN_PID[$name]=$!
  set +m
  echo "--- chain $name started: $* (log: $CI_LOGS/$name.log)"
}

# wait_chain NAME: wait until the chain ends; a failed chain ends the run with its exit code after printing its log.
wait_chain() {
  local name=$1 began=$SECONDS rc=0
  if [[ -z ${CHAIN_STATUS[$name]:-} ]]; then
    wait "${CHAIN_PID[$name]}" || rc=$?
    CHAIN_STATUS[$name]=$rc
  fi
  rc=${CHAIN_STATUS[$name]}
  if ((rc != 0)); then
    echo "--- chain $name FAILED (exit $rc); its log, $CI_LOGS/$name.log:" >&2
    cat "$CI_LOGS/$name.log" >&2
    exit "$rc"
  fi
  TIMINGS+=("$(printf '%-28s %s' "wait for chain $name" "$(clock $((SECONDS - began)))")")
  echo "--- chain $name done (at $(clock $((SECONDS - CI_BEGAN))), waited $(clock $((SECONDS - began))))"
}

# wait_step NAME TARGET: wait until the chain has finished TARGET (or has ended: then as wait_chain).
wait_step() {
  local name=$1 target=$2 began=$SECONDS
  until [[ -e "$CI_LOGS/$name.$target.done" ]]; do
    if ! kill -0 "${CHAIN_PID[$name]}" 2>/dev/null; then
      wait_chain "$name"
      [[ -e "$CI_LOGS/$name.$target.done" ]] && break
      echo "--- chain $name ended without making $target" >&2
      exit 1
    fi
    sleep 2
  done
  TIMINGS+=("$(printf '%-28s %s' "wait for $name: $target" "$(clock $((SECONDS - began)))")")
  echo "--- chain $name: $target done (at $(clock $((SECONDS - CI_BEGAN))), waited $(clock $((SECONDS - began))))"
}

# stop_chains: end every chain still running (with its builds) — the EXIT trap, so a failed run leaves none behind.
stop_chains() {
  local name pid
  for name in "${!CHAIN_PID[@]}"; do
    pid=${CHAIN_PID[$name]}
    if kill -0 "$pid" 2>/dev/null; then
      echo "--- stopping chain $name" >&2
      kill -TERM -- "-$pid" 2>/dev/null || true
    fi
  done
}

# print_timings: the phases' wall times and the total.
print_timings() {
  echo "--- timings"
  printf '%s\n' "${TIMINGS[@]}"
  printf '%-28s %s\n' "total" "$(clock $((SECONDS - CI_BEGAN)))"
}
