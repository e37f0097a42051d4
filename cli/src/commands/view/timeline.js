// timeline.js: draws the visible window of the timeline on its canvas (culled: each row
// from its first visible range by binary search to the last; a range narrower than a
// pixel that falls on a pixel its row already filled is counted, not drawn), and turns
// the wheel, drags and clicks into zooms, pans and selections.
"use strict";

const tctx = timelineCanvas.getContext("2d");
// What the last draw drew, per kind (hidden kinds: 0), for the legend and the tests.
const drawnByKind = new Uint32Array(KINDS.length);
let drawnTotal = 0, lastDrawMs = 0, submitsDrawn = 0;

function sizeTimeline() {
  // The stylesheet's rows first, to measure the room the timeline may take.
  document.body.style.gridTemplateRows = "";
  computeLayout();
  if (layout.height < timelineBox.clientHeight) {
    // Rows at their tallest leave room below: the timeline keeps what it draws on and the
    // statistics under it take the rest (page.css's rows, the timeline's fixed).
    document.body.style.gridTemplateRows =
      `auto 96px auto ${Math.max(120, layout.height)}px minmax(90px, 1fr)`;
  }
  const dpr = devicePixelRatio, w = timelineBox.clientWidth;
  const h = Math.max(timelineBox.clientHeight, layout.height);
  timelineCanvas.width = Math.round(w * dpr); timelineCanvas.height = Math.round(h * dpr);
  timelineCanvas.style.width = w + "px"; timelineCanvas.style.height = h + "px";
  canvasWidth = Math.max(LABEL_W + 1, w);
}

function drawAxis(ctx, w, h) {
  // Ticks every 1, 2 or 5 times a power of ten, about every 100 px, each labelled.
  const span = state.t1 - state.t0, target = span * 100 / Math.max(1, w - LABEL_W);
  const pow = Math.pow(10, Math.floor(Math.log10(target)));
  const step = [1, 2, 5, 10].map((m) => m * pow).find((s) => s >= target);
  ctx.strokeStyle = "#e4e4e4"; ctx.fillStyle = "#444";
  for (let t = Math.ceil(state.t0 / step) * step; t <= state.t1; t += step) {
    const px = Math.round(xOf(t)) + 0.5;
    if (px < LABEL_W) continue;
    ctx.beginPath(); ctx.moveTo(px, 4); ctx.lineTo(px, h); ctx.stroke();
    ctx.fillText(fmtTick(t, step), px + 3, 14);
  }
}

// Frames: alternating bands behind the lanes of their device.
function drawFrameBands(ctx, w) {
  const bands = new Map();
  for (let f = 0; f < FRAME_COUNT; f++) {
    if (FRAMES.e[f] < state.t0 || FRAMES.b[f] > state.t1) continue;
    const a = Math.max(LABEL_W, xOf(FRAMES.b[f])), b = Math.min(w, xOf(FRAMES.e[f]));
    if (!bands.has(FRAMES.device[f])) bands.set(FRAMES.device[f], deviceBand(FRAMES.device[f]));
    const band = bands.get(FRAMES.device[f]);
    if (!band) continue;
    const {top, bottom} = band;
    ctx.fillStyle = FRAMES.frame[f] % 2 ? "rgba(70,110,200,0.05)" : "rgba(70,110,200,0.12)";
    ctx.fillRect(a, top, Math.max(1, b - a), bottom - top);
    // The frame's name in the gap under its band, above the rule between lanes.
    if (b - a > 70) { ctx.fillStyle = "#345"; ctx.fillText("frame " + FRAMES.frame[f], a + 3, bottom + 11); }
  }
}

function drawRows(ctx, w) {
  const rowH = layout.rowH, dim = state.matches;
  ctx.textBaseline = "middle";
  for (const row of ROWS) {
    const top = rowTop(row);
    let filled = -Infinity;  // the right edge of what this row has drawn so far, in px
    for (let k = firstEndingAfter(row, state.t0); k < row.count; k++) {
      const i = row.first + k;
      if (rBegin[i] > state.t1) break;
      const kind = rKind[i];
      if (state.hidden[kind]) continue;
      drawnByKind[kind] += 1;
      const left = Math.max(xOf(rBegin[i]), LABEL_W), right = Math.min(xOf(rEnd[i]), w);
      // Its pixel is already drawn (a search match is drawn over a dimmed neighbour).
      if (right - left < 1 && left < filled && !(dim && dim[i])) continue;
      const bw = Math.max(1, right - left);
      ctx.globalAlpha = dim && !dim[i] ? 0.18 : 1;
      ctx.fillStyle = COLOURS[kind];
      ctx.fillRect(left, top + 1, bw, rowH - 2);
      filled = left + bw;
      if (dim && dim[i]) { ctx.strokeStyle = "#000"; ctx.strokeRect(left + 0.5, top + 1.5, bw - 1, rowH - 3); }
      if (bw > 30) {
        ctx.save(); ctx.beginPath(); ctx.rect(left, top, bw, rowH); ctx.clip();
        ctx.fillStyle = "#111"; ctx.fillText(STRINGS[rName[i]], left + 3, top + rowH / 2);
        ctx.restore();
      }
    }
  }
  ctx.globalAlpha = 1; ctx.textBaseline = "alphabetic";
  const sel = state.selected;
  if (sel && sel.range !== undefined) {
    const row = ROWS.find((r) => sel.range >= r.first && sel.range < r.first + r.count);
    const left = Math.max(xOf(rBegin[sel.range]), LABEL_W), right = Math.min(xOf(rEnd[sel.range]), w);
    if (row && right >= LABEL_W && left <= w) {
      ctx.lineWidth = 2; ctx.strokeStyle = "#000";
      ctx.strokeRect(left, rowTop(row) + 1, Math.max(2, right - left), layout.rowH - 2);
      ctx.lineWidth = 1;
    }
  }
}

// A colour per submitting thread, in the order they first submitted.
const threadColour = new Map();
for (const t of BATCHES.thread) {
  if (!threadColour.has(t)) threadColour.set(t, ["#555", "#c0392b", "#2471a3", "#1e8449", "#8e44ad"][threadColour.size % 5]);
}

// CPU side: each submission's marker at its submit time, a line down to its batch's
// first range: the latency from submit to execution. One path for all the lines and one
// per thread's colour for the markers (thousands of batches in view stay one stroke).
function drawSubmits(ctx, w) {
  submitsDrawn = 0;
  if (!HAS_SUBMITS) return;
  ctx.fillStyle = "#f3f3f3"; ctx.fillRect(LABEL_W, submitTop, w - LABEL_W, SUBMIT_H - 4);
  const y = submitTop + SUBMIT_H - 8;
  const lines = new Path2D(), markers = new Map();
  for (let b = 0; b < BATCHES.submit.length; b++) {
    const s = BATCHES.submit[b], g = batchBegin[b];
    if (s === null || (s > state.t1 && g > state.t1) || (s < state.t0 && g < state.t0)) continue;
    const xs = xOf(s), laneTop = batchLaneTop(b);
    if (laneTop !== null && isFinite(g)) {
      lines.moveTo(Math.max(LABEL_W, xs), y); lines.lineTo(Math.max(LABEL_W, xOf(g)), laneTop);
    }
    if (xs < LABEL_W || xs > w) continue;
    submitsDrawn += 1;
    const colour = state.selected && state.selected.batch === b ? "#000" : threadColour.get(BATCHES.thread[b]);
    if (!markers.has(colour)) markers.set(colour, new Path2D());
    const m = markers.get(colour);
    // A marker at the window's left edge is drawn whole, just right of it.
    const xm = Math.max(LABEL_W + 4, xs);
    m.moveTo(xm, y + 4); m.lineTo(xm - 4, y - 6); m.lineTo(xm + 4, y - 6); m.closePath();
  }
  ctx.strokeStyle = "rgba(60,60,60,0.45)"; ctx.stroke(lines);
  for (const [colour, m] of markers) { ctx.fillStyle = colour; ctx.fill(m); }
}

function drawTimeline() {
  const started = performance.now();
  const dpr = devicePixelRatio, w = timelineWidth(), h = timelineCanvas.height / dpr;
  const ctx = tctx;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, w, h);
  ctx.font = "11px system-ui, sans-serif";
  drawnByKind.fill(0);
  drawFrameBands(ctx, w);
  drawAxis(ctx, w, h);
  drawRows(ctx, w);
  drawCounters(ctx, w);
  drawSubmits(ctx, w);
  // Lane names over everything at the left, a rule between lanes.
  ctx.fillStyle = "#fff"; ctx.fillRect(0, AXIS_H, LABEL_W, h - AXIS_H);
  ctx.fillStyle = "#222";
  if (HAS_SUBMITS) ctx.fillText("CPU submits → GPU start", 6, submitTop + 14);
  LANES.forEach((l, i) => {
    ctx.fillStyle = "#222"; ctx.fillText(l.name, 6, layout.laneTop[i] + 13);
    const below = Math.round(laneBottom(i) + LANE_GAP - 2);
    ctx.fillStyle = "#ccc"; ctx.fillRect(0, below, w, 1);
  });
  drawCounterLabels(ctx);
  drawnTotal = drawnByKind.reduce((a, b) => a + b, 0);
  lastDrawMs = performance.now() - started;
}
viewListeners.push(drawTimeline);

timelineCanvas.addEventListener("wheel", (ev) => {
  ev.preventDefault();
  const px = ev.clientX - timelineCanvas.getBoundingClientRect().left;
  const t = timeAt(px), k = Math.exp(ev.deltaY * 0.0015), span = (state.t1 - state.t0) * k;
  const f = (t - state.t0) / (state.t1 - state.t0);
  setView(t - f * span, t - f * span + span);
}, {passive: false});

let dragFrom = null;
timelineCanvas.addEventListener("mousedown", (ev) => {
  dragFrom = {px: ev.clientX, t0: state.t0, t1: state.t1, moved: false};
  timelineCanvas.classList.add("dragging");
});
window.addEventListener("mouseup", () => { timelineCanvas.classList.remove("dragging"); });
timelineCanvas.addEventListener("mousemove", (ev) => {
  if (dragFrom && ev.buttons & 1) {
    const dx = ev.clientX - dragFrom.px;
    if (Math.abs(dx) > 2) dragFrom.moved = true;
    const dt = dx / (timelineWidth() - LABEL_W) * (dragFrom.t1 - dragFrom.t0);
    setView(dragFrom.t0 - dt, dragFrom.t1 - dt);
    return;
  }
  // What is under the cursor, as the canvas's tooltip.
  const b = submitAt(ev.offsetX, ev.offsetY);
  const i = b >= 0 ? -1 : rangeAt(ev.offsetX, ev.offsetY);
  timelineCanvas.title = b >= 0 ? `submission ${BATCHES.submission[b]}: submit → GPU start ${fmt(batchBegin[b] - BATCHES.submit[b])}`
    : i >= 0 ? `${STRINGS[rName[i]]} (${KINDS[rKind[i]]}): ${fmt(rEnd[i] - rBegin[i])}` : "";
});
// A click (not the end of a drag) selects what is under it.
timelineCanvas.addEventListener("click", (ev) => {
  if (dragFrom && dragFrom.moved) { dragFrom = null; return; }
  dragFrom = null;
  const b = submitAt(ev.offsetX, ev.offsetY);
  const i = b >= 0 ? -1 : rangeAt(ev.offsetX, ev.offsetY);
  state.selected = b >= 0 ? {batch: b} : i >= 0 ? {range: i} : null;
  showSelection();
  changed();
});
timelineCanvas.addEventListener("dblclick", () => setView(0, traceEnd));
