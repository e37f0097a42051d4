// counters.js: the counter tracks of a trace with pipeline statistics
// (GPU_TRACE_COUNTERS=pipeline): under each lane with counted ranges, the statistic chosen
// in the header's list, a bar over each innermost counted range (a draw, a dispatch) as
// tall as its value against the lane's largest. Ranges narrower than a pixel share it,
// the largest value shown.
"use strict";

const COUNTERS = DATA.counters, COUNTER_H = 40;
// Per lane: begins, ends, the largest end so far (for the first visible), each statistic's
// values and largest value.
const counterTracks = new Map();
if (COUNTERS) {
  for (const t of COUNTERS.lanes) {
    const b = Float64Array.from(t.b), e = new Float64Array(b.length), maxEnd = new Float64Array(b.length);
    let m = -Infinity;
    for (let k = 0; k < b.length; k++) { e[k] = b[k] + t.d[k]; maxEnd[k] = m = Math.max(m, e[k]); }
    const v = t.v.map((column) => Float64Array.from(column));
    counterTracks.set(t.lane, {b, e, maxEnd, v, max: v.map((c) => c.reduce((a, x) => Math.max(a, x), 0))});
  }
}
function counterHeight(lane) { return counterTracks.has(lane) && counterStat >= 0 ? COUNTER_H : 0; }

// The statistics some range has a value of; fragment shader invocations first where there
// are any, else the first.
const counterSelect = document.getElementById("counter");
let counterStat = -1;
if (COUNTERS) {
  const tracks = [...counterTracks.values()];
  const any = COUNTERS.names.map((_, s) => tracks.some((t) => t.max[s] > 0));
  COUNTERS.names.forEach((name, s) => { if (any[s]) counterSelect.add(new Option(name, String(s))); });
  const preferred = COUNTERS.names.indexOf("fragment_invocations");
  counterStat = any[preferred] ? preferred : any.indexOf(true);
  counterSelect.value = String(counterStat);
  counterSelect.addEventListener("change", () => { counterStat = Number(counterSelect.value); changed(); });
}
counterSelect.hidden = counterStat < 0;

let counterBarsDrawn = 0;
function drawCounters(ctx, w) {
  counterBarsDrawn = 0;
  if (counterStat < 0) return;
  for (const [lane, t] of counterTracks) {
    const top = layout.laneTop[lane] + laneLevels[lane] * layout.rowH + 2, h = COUNTER_H - 6;
    ctx.fillStyle = "#f5f5f5"; ctx.fillRect(LABEL_W, top, w - LABEL_W, h);
    const v = t.v[counterStat], scale = h / Math.max(1, t.max[counterStat]);
    const columns = new Float64Array(Math.ceil(w) + 1);
    let lo = 0, hi = t.b.length;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (t.maxEnd[mid] < state.t0) lo = mid + 1; else hi = mid; }
    ctx.fillStyle = "#5b7fa6";
    for (let k = lo; k < t.b.length && t.b[k] <= state.t1; k++) {
      if (t.e[k] < state.t0) continue;
      if (!(v[k] > 0)) continue;
      const left = Math.max(xOf(t.b[k]), LABEL_W), right = Math.min(xOf(t.e[k]), w);
      counterBarsDrawn += 1;
      if (right - left < 1) {
        const c = Math.floor(left);
        columns[c] = Math.max(columns[c], v[k]);
      } else {
        const bh = Math.max(1, v[k] * scale);
        ctx.fillRect(left, top + h - bh, right - left, bh);
      }
    }
    for (let c = LABEL_W; c < columns.length; c++) {
      if (columns[c] > 0) { const bh = Math.max(1, columns[c] * scale); ctx.fillRect(c, top + h - bh, 1, bh); }
    }
  }
}

// The tracks' names, over the lane names' white column.
function drawCounterLabels(ctx) {
  if (counterStat < 0) return;
  for (const [lane, t] of counterTracks) {
    const top = layout.laneTop[lane] + laneLevels[lane] * layout.rowH + 2;
    ctx.fillStyle = "#345";
    ctx.fillText(COUNTERS.names[counterStat], 6, top + 13);
    ctx.fillStyle = "#777";
    ctx.fillText(`per range, up to ${t.max[counterStat]}`, 6, top + 27);
  }
}
