#!/usr/bin/env bash
# Runs every Mesquite test. This is the README's test command and what CI runs.
# It installs what the tests need (idempotently) before running them.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v cargo >/dev/null 2>&1; then
  echo "cargo is required (install Rust with rustup)" >&2
  exit 1
fi

# The generated format reference must match the code's layout docs.
python3 scripts/gen-formats.py --check
# The code page tables are generated (types::codepage_tables): they must match the script.
python3 scripts/gen-codepages.py --check

# A hung test would otherwise hold the run until CI's own limit, with nothing to say
# why: past TEST_LIMIT_SECONDS the test processes still running have their threads'
# stacks printed (when gdb is installed) and are stopped, and the run fails.
with_watchdog() {
  local limit="$1"; shift
  "$@" &
  local pid=$!
  (
    # Nothing here may stop the watchdog before its kill (pgrep finds no child, a
    # process is gone by the time gdb or kill reach it).
    set +e
    sleep "$limit" </dev/null >/dev/null 2>&1 &
    local sleeper=$!
    trap 'kill "$sleeper" 2>/dev/null; exit 0' TERM
    wait "$sleeper"
    kill -0 "$pid" 2>/dev/null || exit 0
    echo "test.sh: still running after ${limit}s; stacks of the test processes follow" >&2
    local tests
    tests="$(pgrep -P "$pid" | while read -r c; do pgrep -P "$c"; echo "$c"; done)"
    for t in $tests; do
      echo "--- $(tr '\0' ' ' < "/proc/$t/cmdline" 2>/dev/null)" >&2
      if command -v gdb >/dev/null 2>&1; then
        gdb -p "$t" -batch -ex "thread apply all bt 25" 2>/dev/null | grep -E '^(Thread|#)' | cut -c1-200 >&2 || true
      fi
    done
    # shellcheck disable=SC2086
    kill $tests "$pid" 2>/dev/null
  ) &
  local watchdog=$!
  local rc=0
  wait "$pid" || rc=$?
  kill "$watchdog" 2>/dev/null || true
  wait "$watchdog" 2>/dev/null || true
  return "$rc"
}

# Unit, property, fault-injection and reopen tests of every crate.
# MESQUITE_LONG=1 runs the longer property/crash variants.
with_watchdog "${TEST_LIMIT_SECONDS:-2700}" cargo test --workspace --quiet "$@"

# Real clients over TCP against `mesquite serve` (installs the drivers on first use).
bash tests/clients/run.sh

# kill -9 of a real server under load: acknowledged commits survive, CHECKDB is clean.
bash tests/durability/run.sh

# The TDS decoders under libFuzzer for a bounded time (skipped without a nightly toolchain).
FUZZ_SECONDS="${FUZZ_SECONDS:-10}" bash scripts/fuzz.sh
