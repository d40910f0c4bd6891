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

# Unit, property, fault-injection and reopen tests of every crate.
# MESQUITE_LONG=1 runs the longer property/crash variants.
cargo test --workspace --quiet "$@"

# Real clients over TCP against `mesquite serve` (installs the drivers on first use).
bash tests/clients/run.sh

# kill -9 of a real server under load: acknowledged commits survive, CHECKDB is clean.
bash tests/durability/run.sh

# The TDS decoders under libFuzzer for a bounded time (skipped without a nightly toolchain).
FUZZ_SECONDS="${FUZZ_SECONDS:-10}" bash scripts/fuzz.sh
