#!/usr/bin/env bash
# The whole test suite: unit tests and the Lavapipe integration tests (real Vulkan programs
# run with the layer, validation beneath it). Installs what it needs first.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh

# The integration tests load the freshly built debug layers (utrace, and the fault-injection
# layer beneath it) through generated manifests, and run the tests' tracing service and
# Perfetto consumer (tests/traced, tests/record), and the `utrace` command (cli).
# --locked: a Cargo.lock that does not match the manifests fails instead of being rewritten.
cargo build --locked --quiet -p utrace-layer -p utrace-fault-layer -p utrace-mini-traced -p utrace-perfetto-record -p utrace-cli
# The whole workspace, unless the arguments name packages (-p/--package) themselves.
scope=(--workspace)
for arg in "$@"; do
  case "$arg" in -p|--package|--package=*|-p*) scope=() ;; esac
done
cargo test --locked "${scope[@]}" "$@"
