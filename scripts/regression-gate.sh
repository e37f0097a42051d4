#!/usr/bin/env bash
# The regression gate's live check on this machine: the real workload (`passes`, frames
# of three labelled passes), traced by the release layer, RUNS runs a side with the sides
# interleaved (so that the machine's drift falls on both):
#   - the baseline against lighting made 10% heavier: the gate must say HURT lighting;
#   - against 5% heavier: the gate's sensitivity, at the default 5% threshold and at 2%;
#   - AA comparisons of the baseline against itself: what the gate flags by chance;
#   - the CI recipe: GFXReconstruct captures of the baseline and of +10%, replayed RUNS
#     times each under the layer (interleaved), then AA comparisons of the baseline's
#     replays (needs gfxreconstruct).
# Prints each diff and the A/A count. Not a test (it takes minutes and its numbers are the
# machine's); CI tests the statistics on generated runs (tests/tests/diff_runs.rs).
#
# Lavapipe runs on LP_NUM_THREADS worker threads, by default one per core; on two cores
# they compete with the application's and the layer's threads, and a run's speed then
# varies by ±15% from process to process (measured 2026-11-29), which hides a 10% change
# from ten runs. LP_NUM_THREADS=1 (the default here; set it to compare) makes the device's
# speed steady, as a GPU's is (±1.5%).
#
#   bash scripts/regression-gate.sh            # RUNS=10 AA=20 FRAMES=20 by default
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-10}
aa=${AA:-20}
frames=${FRAMES:-20}
export LP_NUM_THREADS=${LP_NUM_THREADS:-1}
cargo build --locked --release --quiet -p utrace-layer -p utrace-cli
cargo build --locked --release --quiet -p utrace-tests --bin utrace-workload
utrace=target/release/utrace
workload=target/release/utrace-workload
out=$(mktemp -d "${TMPDIR:-/tmp}/utrace-gate.XXXXXX")
echo "regression-gate: runs in $out (LP_NUM_THREADS=$LP_NUM_THREADS)" >&2

# one DIR N [ARGS...]: run N of a side, its trace DIR/run-NN.txt (a failed run said, and
# left out of the side).
one() {
  local dir=$1 n=$2
  shift 2
  mkdir -p "$dir"
  local trace
  trace=$dir/run-$(printf %02d "$n").txt
  if ! "$utrace" run --out "$trace" -- "$workload" --scenario passes --frames "$frames" "$@" \
    > /dev/null 2>&1; then
    echo "regression-gate: run $n of $dir failed; left out" >&2
    rm -f "$trace"
  fi
}
# flagged DIFF_JSON: how many groups a diff called HURT or HELPED.
flagged() {
  python3 -c 'import json,sys; d=json.load(sys.stdin); print(len(d["hurt"])+len(d["helped"]))'
}

for i in $(seq 1 "$runs"); do
  one "$out/base" "$i"
  one "$out/plus10" "$i" --heavy-pass lighting --heavy-factor 1.10
  one "$out/plus5" "$i" --heavy-pass lighting --heavy-factor 1.05
done
echo "== baseline against lighting +10% ($runs runs a side)"
"$utrace" diff "$out/base" "$out/plus10" --by label || true
echo "== baseline against lighting +5%"
"$utrace" diff "$out/base" "$out/plus5" --by label || true
echo "== the same, --threshold 2"
"$utrace" diff "$out/base" "$out/plus5" --by label --threshold 2 || true

total=0
for k in $(seq 1 "$aa"); do
  for i in $(seq 1 "$runs"); do
    one "$out/aa$k/a" "$i"
    one "$out/aa$k/b" "$i"
  done
  # diff exits 1 when it finds something HURT: the count is what matters here.
  n=$({ "$utrace" diff "$out/aa$k/a" "$out/aa$k/b" --by label --json || true; } | flagged)
  echo "A/A $k: $n group(s) flagged"
  total=$((total + n))
done
echo "== A/A: $total group(s) flagged in $aa comparisons of 3 groups ($((3 * aa)) tests at p < 0.05)"

# The CI recipe: capture once, replay many times.
capture() {
  VK_INSTANCE_LAYERS=VK_LAYER_LUNARG_gfxreconstruct GFXRECON_CAPTURE_FILE="$1" \
    GFXRECON_CAPTURE_FILE_TIMESTAMP=false \
    "$workload" --scenario passes --frames "$frames" "${@:2}" > /dev/null 2>&1
}
replay() {
  local dir=$1 n=$2 file=$3
  mkdir -p "$dir"
  "$utrace" run --out "$dir/run-$(printf %02d "$n").txt" -- gfxrecon-replay "$file" \
    > /dev/null 2>&1 || echo "regression-gate: replay $n of $dir failed" >&2
}
capture "$out/base.gfxr"
capture "$out/plus10.gfxr" --heavy-pass lighting --heavy-factor 1.10
for i in $(seq 1 "$runs"); do
  replay "$out/replay-base" "$i" "$out/base.gfxr"
  replay "$out/replay-plus10" "$i" "$out/plus10.gfxr"
done
echo "== replays: baseline against lighting +10%"
"$utrace" diff "$out/replay-base" "$out/replay-plus10" --by label || true
total=0
for k in $(seq 1 "$aa"); do
  for i in $(seq 1 "$runs"); do
    replay "$out/replay-aa$k/a" "$i" "$out/base.gfxr"
    replay "$out/replay-aa$k/b" "$i" "$out/base.gfxr"
  done
  n=$({ "$utrace" diff "$out/replay-aa$k/a" "$out/replay-aa$k/b" --by label --json || true; } | flagged)
  total=$((total + n))
done
echo "== replays A/A: $total group(s) flagged in $aa comparisons of 3 groups"
