// main.js: the first draw, resizing, the header's summary, and what tests read. The URL's
// fragment can script the page as a user would (each step dispatches the event a user's
// click or typing would): `#click=slowest` clicks the slowest frame's bar, `#hide=KIND`
// clicks the legend entry of KIND, `#search=TEXT` types TEXT in the search box, `#zoom=in`
// or `#zoom=out` turns the wheel one notch at the timeline's middle, `#select=longest`
// clicks the middle of the longest range in view, `#counter=NAME` picks the statistic of
// the counter tracks; steps joined by `&` run in order. The
// outcome lands on <body data-*> and in `window.utraceView`.
"use strict";

function layoutAll() { sizeFrames(); sizeTimeline(); flush(); }
window.addEventListener("resize", layoutAll);
document.getElementById("reset").addEventListener("click", () => setView(0, traceEnd));
document.getElementById("summary").textContent =
  `${N} ranges · ${LANES.length} queue(s) · ${FRAME_COUNT} frame(s) · ${fmt(traceEnd)}` +
  (HAS_SUBMITS ? "" : " · no submit times in this trace (older layers wrote none)");
showSelection();

const firstDrawStart = performance.now();
sizeFrames();
sizeTimeline();
flush();
const firstDrawMs = performance.now() - firstDrawStart;
// From the page's navigation (reading the file, parsing the data) to its first draw.
const firstDrawAt = performance.now();

// What the page shows now, for tests and the curious (the console: `utraceView`).
function publishState() {
  const kinds = {};
  KINDS.forEach((k, i) => { kinds[k] = drawnByKind[i]; });
  const view = {ranges: N, drawn: drawnTotal, drawnByKind: kinds, frames: FRAME_COUNT,
                frameBars: frameBarsDrawn, t0: state.t0, t1: state.t1, statsCount,
                submitsDrawn, drawMs: lastDrawMs, statsMs};
  window.utraceView = view;
  const d = document.body.dataset;
  d.ranges = String(N); d.bars = String(drawnTotal); d.frameBars = String(frameBarsDrawn);
  d.viewT0 = String(Math.round(state.t0)); d.viewT1 = String(Math.round(state.t1));
  d.drawnByKind = KINDS.map((k, i) => `${k}:${drawnByKind[i]}`).join(",");
  d.timelineMs = lastDrawMs.toFixed(1); d.statsMs = statsMs.toFixed(1);
  d.submitsDrawn = String(submitsDrawn);
  d.counterBars = String(counterBarsDrawn);
  d.counter = counterStat >= 0 ? COUNTERS.names[counterStat] : "";
  // Height of the timeline's box with nothing drawn in it (rows at their tallest).
  d.timelineSpare = String(Math.max(0, timelineBox.clientHeight - layout.height));
  return view;
}
viewListeners.push(publishState);

function click(element, px, py) {
  const r = element.getBoundingClientRect();
  element.dispatchEvent(new MouseEvent("click", {bubbles: true, clientX: r.left + px, clientY: r.top + py}));
}

// The fragment's steps, each timed (ms): its event, and the redraw and statistics it causes.
function runSteps() {
  const steps = decodeURIComponent(location.hash.slice(1)).split("&").filter(Boolean);
  const timings = [];
  for (const step of steps) {
    const [what, arg = ""] = step.split("=");
    const started = performance.now();
    if (what === "click" && arg === "slowest") {
      if (!FRAME_COUNT) continue;
      let slowest = 0;
      for (let f = 1; f < FRAME_COUNT; f++) if (FRAMES.gpu[f] > FRAMES.gpu[slowest]) slowest = f;
      click(framesCanvas, frameX(slowest), framesCanvas.clientHeight - 16);
      document.body.dataset.slowestFrame = String(FRAMES.frame[slowest]);
    } else if (what === "zoom") {
      // A wheel notch (deltaY 100) in or out at the middle of the timeline.
      const r = timelineCanvas.getBoundingClientRect(), px = (LABEL_W + timelineWidth()) / 2;
      timelineCanvas.dispatchEvent(new WheelEvent("wheel", {deltaY: arg === "out" ? 100 : -100,
        clientX: r.left + px, clientY: r.top + AXIS_H + 10, bubbles: true, cancelable: true}));
    } else if (what === "hide") {
      const b = legendButtons[KINDS.indexOf(arg)];
      if (b) b.click();
    } else if (what === "search") {
      searchBox.value = arg;
      searchBox.dispatchEvent(new Event("input"));
    } else if (what === "counter") {
      const option = [...counterSelect.options].find((o) => o.text === arg);
      if (option) { counterSelect.value = option.value; counterSelect.dispatchEvent(new Event("change")); }
    } else if (what === "select" && arg === "longest") {
      let best = -1;
      for (const row of ROWS) {
        for (let k = firstEndingAfter(row, state.t0); k < row.count && rBegin[row.first + k] <= state.t1; k++) {
          const i = row.first + k;
          if (best < 0 || rEnd[i] - rBegin[i] > rEnd[best] - rBegin[best]) best = i;
        }
      }
      if (best >= 0) {
        const row = ROWS.find((r) => best >= r.first && best < r.first + r.count);
        const mid = xOf((Math.max(rBegin[best], state.t0) + Math.min(rEnd[best], state.t1)) / 2);
        click(timelineCanvas, mid, rowTop(row) + layout.rowH / 2);
      }
    } else {
      console.error(`utrace view: unknown step "${step}" in the URL's fragment`);
    }
    flush();
    timings.push(Math.round(performance.now() - started));
  }
  document.body.dataset.stepMs = timings.join(",");
}

publishState();
document.body.dataset.drawMs = String(Math.round(firstDrawMs));
document.body.dataset.firstDrawAtMs = String(Math.round(firstDrawAt));
document.body.dataset.initialStatsCount = String(statsCount);
runSteps();
publishState();
