// model.js: the trace's data read once into typed arrays, the formats of times, the
// colours of kinds, and the state every part shares (the visible window, hidden kinds,
// the search's matches, the selection), with the one way to change the window.
"use strict";

// Errors are counted where a test (and a curious user) can read them: <body data-errors>.
let errors = 0;
function countError() { errors += 1; document.body.dataset.errors = String(errors); }
window.addEventListener("error", countError);
const consoleError = console.error.bind(console);
console.error = (...a) => { countError(); consoleError(...a); };
document.body.dataset.errors = "0";

// Written by `utrace view` (cli/src/commands/view/data.rs says the fields); times in ns
// from the trace's start. Parsed as JSON, then the columns become typed arrays.
const DATA = JSON.parse(document.getElementById("data").textContent);
const N = DATA.ranges.b.length;
const rBegin = Float64Array.from(DATA.ranges.b);
const rEnd = new Float64Array(N);
for (let i = 0; i < N; i++) rEnd[i] = rBegin[i] + DATA.ranges.d[i];
const rKind = Uint16Array.from(DATA.ranges.kind);
const rName = Uint32Array.from(DATA.ranges.name);
const rPipe = Int32Array.from(DATA.ranges.pipe);
const rArgs = Uint32Array.from(DATA.ranges.args);
const rBatch = Uint32Array.from(DATA.ranges.batch);
DATA.ranges = null;  // the typed arrays hold it all now
const KINDS = DATA.kinds, STRINGS = DATA.strings, LANES = DATA.lanes, BATCHES = DATA.batches;
const FRAMES = DATA.frames, FRAME_COUNT = FRAMES.frame.length;

// Rows: a lane's level, its ranges contiguous and sorted by begin, never overlapping; with
// the running maximum of their ends, binary search finds the first visible one.
const ROWS = DATA.rows.map(([lane, level, first, count]) => {
  const maxEnd = new Float64Array(count);
  let m = -Infinity;
  for (let k = 0; k < count; k++) maxEnd[k] = m = Math.max(m, rEnd[first + k]);
  return {lane, level, first, count, maxEnd};
});
// The index (into the row) of the first range of `row` that ends at or after t.
function firstEndingAfter(row, t) {
  let lo = 0, hi = row.count;
  while (lo < hi) { const mid = (lo + hi) >> 1; if (row.maxEnd[mid] < t) lo = mid + 1; else hi = mid; }
  return lo;
}

// Per batch: the begin of its first range, and its frame's index in FRAMES.
const batchBegin = new Float64Array(BATCHES.number.length).fill(Infinity);
for (let i = 0; i < N; i++) batchBegin[rBatch[i]] = Math.min(batchBegin[rBatch[i]], rBegin[i]);
const frameIndex = new Map();
for (let f = 0; f < FRAME_COUNT; f++) frameIndex.set(FRAMES.device[f] + ":" + FRAMES.frame[f], f);
function frameOfBatch(b) { return frameIndex.get(BATCHES.device[b] + ":" + BATCHES.frame[b]); }
const HAS_SUBMITS = BATCHES.submit.some((s) => s !== null);

let traceEnd = 1;
for (let i = 0; i < N; i++) traceEnd = Math.max(traceEnd, rEnd[i]);

// A colour per kind, from distinct hues in the kinds' sorted order.
const PALETTE = ["#e6a157", "#6fa8dc", "#93c47d", "#e06666", "#b4a7d6", "#f6d55c", "#76d7c4",
                 "#d5a6bd", "#a2c4c9", "#c27ba0", "#9fc5e8", "#ffd966", "#8e7cc3", "#b6d7a8"];
const COLOURS = KINDS.map((_, i) => PALETTE[i % PALETTE.length]);

function fmt(ns) {
  if (ns < 0) return "-" + fmt(-ns);
  if (ns >= 1e9) return (ns / 1e9).toFixed(3) + " s";
  if (ns >= 1e6) return (ns / 1e6).toFixed(3) + " ms";
  if (ns >= 1e3) return (ns / 1e3).toFixed(1) + " µs";
  return ns.toFixed(0) + " ns";
}
// A tick's time in the unit of its step, with as many decimals as the step needs.
function fmtTick(t, step) {
  const [div, unit] = step >= 1e6 ? [1e6, " ms"] : step >= 1e3 ? [1e3, " µs"] : [1, " ns"];
  const decimals = Math.max(0, Math.ceil(-Math.log10(step / div) - 1e-9));
  return (t / div).toFixed(decimals) + unit;
}
// Nearest-rank percentile of sorted values, as `utrace report` computes it.
function rank(sorted, p) {
  return sorted.length ? sorted[Math.max(1, Math.ceil(p * sorted.length / 100)) - 1] : 0;
}

// What every part shares.
const state = {
  t0: 0, t1: traceEnd,
  hidden: new Uint8Array(KINDS.length),  // 1: the legend switched the kind off
  matches: null,                         // Uint8Array per range while a search is on
  selected: null,                        // {range} | {batch} | {frame}
};
// Parts that follow the window; each gets called with `final` false while the user zooms
// (per animation frame) and true once (after a pause, or when flushed).
const viewListeners = [];
let pendingFrame = 0, settleTimer = 0;
function notify(final) { for (const f of viewListeners) f(final); }
function setView(t0, t1) {
  const span = Math.min(Math.max(100, t1 - t0), traceEnd * 10);
  const mid = (t0 + t1) / 2;
  state.t0 = t1 - t0 < 100 ? mid - span / 2 : t0;
  state.t1 = state.t0 + span;
  changed();
}
// Something drawn changed: redraw on the next animation frame, settle after a pause.
function changed() {
  if (!pendingFrame) pendingFrame = requestAnimationFrame(() => { pendingFrame = 0; notify(false); });
  clearTimeout(settleTimer);
  settleTimer = setTimeout(() => notify(true), 150);
}
// Draws everything now (tests, first paint).
function flush() {
  cancelAnimationFrame(pendingFrame); pendingFrame = 0;
  clearTimeout(settleTimer);
  notify(true);
}
