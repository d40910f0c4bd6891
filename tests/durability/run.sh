#!/usr/bin/env bash
# kill -9 of a real server under load through a real client (pytds): every acknowledged
# durable commit survives, delayed-durable losses stay inside the documented window, and
# DBCC CHECKDB is clean after recovery. ROUNDS (default 2) rounds of each.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash scripts/clients/setup-python.sh
cargo build --quiet -p mesquite
BIN="$PWD/${CARGO_TARGET_DIR:-target}/debug/mesquite"
.venv/bin/python tests/durability/kill9.py "$BIN" "${ROUNDS:-2}"
