#!/usr/bin/env bash
# Bounded libFuzzer run of the TDS decoders (crates/tds/fuzz): every target for
# FUZZ_SECONDS (default 20) from the corpus kept between runs. A crash fails the run and
# leaves its input under crates/tds/fuzz/artifacts/<target>/.
# cargo-fuzz needs a nightly toolchain; without one (and no way to install it) the run is
# skipped with a message: the stable property test `decoders_never_panic` in
# crates/tds/tests/codec.rs still covers the same decoders on every `cargo test`.
# Usage: bash scripts/fuzz.sh [target...]
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
secs=${FUZZ_SECONDS:-20}
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(packets prelogin login7 rpc tokens bulk_load)

skip() { echo "fuzz: skipped: $1"; exit 0; }
command -v rustup >/dev/null 2>&1 || skip "no rustup to find a nightly toolchain"
if ! rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
  timeout 600 rustup toolchain install nightly --profile minimal >/dev/null 2>&1 \
    || skip "no nightly toolchain and it could not be installed"
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
  timeout 900 cargo install cargo-fuzz --locked --quiet >/dev/null 2>&1 \
    || skip "cargo-fuzz could not be installed"
fi

cd crates/tds/fuzz
export CARGO_TARGET_DIR="${FUZZ_TARGET_DIR:-$root/target/fuzz}"
# No sanitizer: the decoders are safe Rust, so ASan adds build and run time for nothing;
# libFuzzer's coverage guidance and Rust's own checks (overflow, bounds) remain.
cargo +nightly fuzz build -s none -O >/dev/null 2>&1 || cargo +nightly fuzz build -s none -O
for t in "${targets[@]}"; do
  mkdir -p "corpus/$t"
  out=$(cargo +nightly fuzz run -s none -O "$t" "corpus/$t" -- \
          -max_total_time="$secs" -rss_limit_mb=2048 -print_final_stats=1 2>&1) || {
    echo "$out" | tail -40
    echo "fuzz: $t FAILED (input saved under crates/tds/fuzz/artifacts/$t/)"
    exit 1
  }
  runs=$(echo "$out" | sed -n 's/^stat::number_of_executed_units: *//p' | tail -1)
  cov=$(echo "$out" | grep -o 'cov: [0-9]*' | tail -1)
  echo "fuzz: $t ok: ${runs:-?} inputs in ${secs}s, ${cov:-cov: ?}, corpus $(ls "corpus/$t" | wc -l)"
done
