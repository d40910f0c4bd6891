#!/usr/bin/env bash
# tedious (Node.js TDS driver), through node's built-in test runner.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash scripts/clients/setup-node.sh
cd tests/clients/node
node --test --test-concurrency=1 test_tedious.js
