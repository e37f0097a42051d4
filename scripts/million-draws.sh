#!/usr/bin/env bash
# The path most applications take, at the scale of issue 42: one one-time command buffer of
# a million traced draws of a visible triangle, submitted once, the device destroyed right
# after its fence. Every one of the 2,000,004 events must be in the txt trace and in the
# Perfetto trace, and both must end with their end record saying dropped=0. Lavapipe takes
# about a minute of GPU time for it, so this is a command, not part of CI (which runs the
# same test at 100,000 draws: tests/tests/trace_end.rs). Release build of the layer, as
# users run it.
#
#   bash scripts/million-draws.sh          # a million draws
#   bash scripts/million-draws.sh 300000   # another count
set -euo pipefail
cd "$(dirname "$0")/.."
draws=${1:-1000000}
cargo build --release -p utrace-layer -p utrace-tests --bins
started=$SECONDS
# The harness gives a workload 120 s; the GPU alone takes about a minute here.
UTRACE_TEST_TIME_FACTOR=${UTRACE_TEST_TIME_FACTOR:-10} UTRACE_TEST_DRAWS=$draws cargo test --release -p utrace-tests --test trace_end \
    a_one_time_command_buffer_of_many_draws_is_written_whole_before_the_device_goes \
    -- --nocapture
echo "million-draws: $draws draws written whole in txt and Perfetto ($((SECONDS - started)) s)"
