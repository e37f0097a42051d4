// lanes.js: where things go on the timeline's canvas: the time axis, the CPU submit row
// (when the trace has submit times), then a lane per queue (lanes come by device), each a
// row per nesting level and its counter track if it has one; rows grow to use the height
// there is. And what is under a point.
"use strict";

// A lane's gap holds its frames' names (11 px text) above the rule to the next lane.
const LABEL_W = 200, AXIS_H = 22, SUBMIT_H = 26, LANE_GAP = 16;
const timelineCanvas = document.getElementById("timeline");
const timelineBox = document.getElementById("timeline-box");
const laneLevels = LANES.map(() => 1);
for (const row of ROWS) laneLevels[row.lane] = Math.max(laneLevels[row.lane], row.level + 1);
const totalLevels = laneLevels.reduce((a, b) => a + b, 0);
const submitTop = AXIS_H;
const layout = {rowH: 18, laneTop: [], height: 0};

// Rows share the height left after the axis, the submit row and the gaps: 14 to 56 px each.
function computeLayout() {
  const first = AXIS_H + (HAS_SUBMITS ? SUBMIT_H : 0);
  const tracks = LANES.reduce((h, _, i) => h + counterHeight(i), 0);
  const room = timelineBox.clientHeight - first - LANES.length * LANE_GAP - tracks;
  layout.rowH = Math.max(14, Math.min(56, Math.floor(room / Math.max(1, totalLevels))));
  let y = first;
  layout.laneTop = LANES.map((_, i) => {
    const top = y;
    y = top + laneLevels[i] * layout.rowH + counterHeight(i) + LANE_GAP;
    return top;
  });
  layout.height = y;
}

// Where lane i's rows and counter track end (its gap to the next lane follows).
function laneBottom(i) { return layout.laneTop[i] + laneLevels[i] * layout.rowH + counterHeight(i); }

// Each device's band of lanes (lanes come sorted by device), for its frames.
function deviceBand(device) {
  const lanes = [];
  LANES.forEach((l, i) => { if (l.device === device) lanes.push(i); });
  if (!lanes.length) return null;
  const last = lanes[lanes.length - 1];
  return {top: layout.laneTop[lanes[0]], bottom: laneBottom(last)};
}

// The canvas's width in CSS px, kept at each resize (reading clientWidth per range would
// force a layout query a million times a draw).
let canvasWidth = 1;
function timelineWidth() { return canvasWidth; }
function xOf(t) { return LABEL_W + (t - state.t0) / (state.t1 - state.t0) * (timelineWidth() - LABEL_W); }
function timeAt(px) { return state.t0 + (px - LABEL_W) / (timelineWidth() - LABEL_W) * (state.t1 - state.t0); }
function rowTop(row) { return layout.laneTop[row.lane] + row.level * layout.rowH; }
// The y where a batch's lane begins (its submit line ends there).
function batchLaneTop(b) { const lane = BATCHES.lane[b]; return lane >= 0 ? layout.laneTop[lane] : null; }

// The range under (px, py): the one of that row nearest in time within a pixel; -1 if none.
function rangeAt(px, py) {
  const t = timeAt(px), slack = (state.t1 - state.t0) / Math.max(1, timelineWidth() - LABEL_W);
  for (const row of ROWS) {
    const top = rowTop(row);
    if (py < top || py >= top + layout.rowH) continue;
    let best = -1, bestDist = Infinity;
    for (let k = firstEndingAfter(row, t - slack); k < row.count; k++) {
      const i = row.first + k;
      if (rBegin[i] > t + slack) break;
      if (state.hidden[rKind[i]] || rEnd[i] < t - slack) continue;
      const dist = rBegin[i] <= t && t <= rEnd[i] ? 0 : Math.min(Math.abs(rBegin[i] - t), Math.abs(rEnd[i] - t));
      if (dist < bestDist) { best = i; bestDist = dist; }
    }
    return best;
  }
  return -1;
}

// The batch whose submit marker is under (px, py), or -1.
function submitAt(px, py) {
  if (!HAS_SUBMITS || py < submitTop || py >= submitTop + SUBMIT_H) return -1;
  let best = -1, bestDist = 4;
  for (let b = 0; b < BATCHES.submit.length; b++) {
    const s = BATCHES.submit[b];
    if (s === null) continue;
    const d = Math.abs(xOf(s) - px);
    if (d < bestDist) { best = b; bestDist = d; }
  }
  return best;
}
