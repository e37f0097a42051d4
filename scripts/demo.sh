#!/usr/bin/env bash
# The main job: builds VK_LAYER_utrace and the built-in Vulkan workload, runs the workload
# on Lavapipe with the layer tracing (a window under Xvfb, so frames end at present),
# prints the trace, then the `utrace report` of it (where the GPU time went; with
# GPU_TRACE_COUNTERS set, each group's pipeline statistics too). Extra arguments go to the
# workload (e.g. --frames 5).
set -euo pipefail
# A relative GPU_TRACEFILE names a file where the user is, not in the repository.
if [[ -n "${GPU_TRACEFILE:-}" && "$GPU_TRACEFILE" != /* ]]; then
  export GPU_TRACEFILE="$PWD/$GPU_TRACEFILE"
fi
cd "$(dirname "$0")/.."
# Only what the demo runs: the tests' browser, validation layers and second Mesa are not.
setup_for=demo source scripts/setup.sh

cargo build --locked --release --quiet -p utrace-layer
cargo build --locked --release --quiet -p utrace-tests --bin utrace-workload
cargo build --locked --release --quiet -p utrace-cli
# manifest/VkLayer_utrace.json points at this library; without it the loader would skip
# the layer silently.
test -f target/release/libVkLayer_utrace.so
report=$(mktemp /tmp/utrace-demo-report.XXXXXX.json)
# Without GPU_TRACEFILE the trace goes to a temporary file, printed, then reported on.
printed=""
if [[ -z "${GPU_TRACEFILE:-}" && "${GPU_TRACE_FORMAT:-txt}" != *perfetto* ]]; then
  printed=$(mktemp /tmp/utrace-demo-trace.XXXXXX.txt)
  export GPU_TRACEFILE="$printed"
fi
VK_ADD_LAYER_PATH="$PWD/manifest" \
VK_INSTANCE_LAYERS=VK_LAYER_utrace \
GPU_TRACE=${GPU_TRACE:-1} \
  xvfb-run -a target/release/utrace-workload --scenario demo --report "$report" "$@"
rm -f "$report"
if [[ -n "$printed" ]]; then
  cat "$printed"
elif [[ -f "$GPU_TRACEFILE" ]]; then
  # A trace written to a file: say where it is, since nothing was printed.
  case "${GPU_TRACE_FORMAT:-}:$GPU_TRACEFILE" in
    *perfetto*|*.pftrace|*.perfetto-trace)
      echo "Perfetto trace: $GPU_TRACEFILE ($(stat -c %s "$GPU_TRACEFILE") bytes); open it at https://ui.perfetto.dev" ;;
    *)
      echo "Trace: $GPU_TRACEFILE ($(stat -c %s "$GPU_TRACEFILE") bytes)" ;;
  esac
fi
if [[ -f "$GPU_TRACEFILE" ]]; then
  # With GPU counters on, the report adds each group's pipeline statistics.
  report_args=()
  case "${GPU_TRACE_COUNTERS:-}" in
    ""|0|off|none) ;;
    *) report_args+=(--counters) ;;
  esac
  echo
  echo "== utrace report ${report_args[*]} $GPU_TRACEFILE =="
  target/release/utrace report "${report_args[@]}" "$GPU_TRACEFILE"
fi
[[ -z "$printed" ]] || rm -f "$printed"
