// frames.js: the frame-time graph across the top. One bar per frame, as tall as its GPU
// time (the time its ranges cover, as `utrace report` counts a frame), the slow ones red;
// p50 and p99 as lines; the frames in the timeline's window shaded. A click zooms the
// timeline to that frame.
"use strict";

const framesCanvas = document.getElementById("frames");
const framesCtx = framesCanvas.getContext("2d");
const FRAMES_LEFT = 70;  // room for the scale's labels
const frameGpuSorted = Float64Array.from(FRAMES.gpu).sort();
const frameP50 = rank(frameGpuSorted, 50), frameP99 = rank(frameGpuSorted, 99);
const frameMax = frameGpuSorted.length ? frameGpuSorted[frameGpuSorted.length - 1] : 1;
// Slow: well over the typical frame.
function frameIsSlow(f) { return FRAMES.gpu[f] > 2 * frameP50 && FRAMES.gpu[f] >= frameP99; }
let frameBarsDrawn = 0;

let framesSize = [1, 1];  // CSS px, kept at each resize
function sizeFrames() { framesSize = [framesCanvas.clientWidth, framesCanvas.clientHeight]; }
function framesGeometry() {
  const [w, h] = framesSize;
  const slot = (w - FRAMES_LEFT - 8) / Math.max(1, FRAME_COUNT);
  const y = (ns) => h - 14 - (ns / Math.max(1, frameMax)) * (h - 24);
  return {w, h, slot, y};
}

function drawFrames() {
  const dpr = devicePixelRatio, {w, h, slot, y} = framesGeometry();
  if (framesCanvas.width !== Math.round(w * dpr)) framesCanvas.width = Math.round(w * dpr);
  if (framesCanvas.height !== Math.round(h * dpr)) framesCanvas.height = Math.round(h * dpr);
  const ctx = framesCtx;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, w, h);
  ctx.font = "11px system-ui, sans-serif";
  frameBarsDrawn = 0;
  const gap = slot > 4 ? 1 : 0;
  for (let f = 0; f < FRAME_COUNT; f++) {
    const left = FRAMES_LEFT + f * slot;
    const inView = FRAMES.e[f] >= state.t0 && FRAMES.b[f] <= state.t1;
    if (inView) { ctx.fillStyle = "rgba(70,110,200,0.12)"; ctx.fillRect(left, 0, Math.max(1, slot), h - 12); }
    const top = Math.min(y(FRAMES.gpu[f]), h - 15);
    const selected = state.selected && state.selected.frame === f;
    ctx.fillStyle = selected ? "#222" : frameIsSlow(f) ? "#d0453a" : "#5b8bd0";
    ctx.fillRect(left, top, Math.max(1, slot - gap), h - 14 - top);
    frameBarsDrawn += 1;
  }
  // The percentiles, labelled at the left.
  // The percentiles: p50 labelled at the left, p99 at the right (they are often close).
  for (const [label, ns, colour, atRight] of [["p50", frameP50, "#2a7a2a", false], ["p99", frameP99, "#b36b00", true]]) {
    const py = Math.round(y(ns)) + 0.5;
    ctx.strokeStyle = colour; ctx.setLineDash([4, 3]);
    ctx.beginPath(); ctx.moveTo(FRAMES_LEFT, py); ctx.lineTo(w - 8, py); ctx.stroke();
    ctx.setLineDash([]);
    const text = `${label} ${fmt(ns)}`, ty = Math.max(10, Math.min(h - 16, py - 3));
    const tx = atRight ? w - 8 - ctx.measureText(text).width - 4 : 2;
    ctx.fillStyle = "rgba(255,255,255,0.85)"; ctx.fillRect(tx - 1, ty - 10, ctx.measureText(text).width + 2, 12);
    ctx.fillStyle = colour; ctx.fillText(text, tx, ty);
  }
  ctx.fillStyle = "#444";
  if (y(frameP50) > 24) ctx.fillText(`max ${fmt(frameMax)}`, 2, 11);
  ctx.fillText(`${FRAME_COUNT} frames · GPU time per frame (time covered by its ranges) · click a frame to zoom to it`,
               FRAMES_LEFT, h - 2);
}

// The frame under x, or -1.
function frameAt(px) {
  const {slot} = framesGeometry();
  const f = Math.floor((px - FRAMES_LEFT) / slot);
  return f >= 0 && f < FRAME_COUNT ? f : -1;
}
// The frame's slot centre, for scripted clicks.
function frameX(f) { const {slot} = framesGeometry(); return FRAMES_LEFT + (f + 0.5) * slot; }

function zoomToFrame(f) {
  const margin = (FRAMES.e[f] - FRAMES.b[f]) * 0.04 + 100;
  state.selected = {frame: f};
  setView(FRAMES.b[f] - margin, FRAMES.e[f] + margin);
  showSelection();
}

framesCanvas.addEventListener("click", (ev) => {
  const f = frameAt(ev.offsetX);
  if (f >= 0) zoomToFrame(f);
});
framesCanvas.addEventListener("mousemove", (ev) => {
  const f = frameAt(ev.offsetX);
  framesCanvas.title = f < 0 ? "" :
    `frame ${FRAMES.frame[f]}${FRAMES.device[f] ? " (device " + FRAMES.device[f] + ")" : ""}: GPU ${fmt(FRAMES.gpu[f])}, span ${fmt(FRAMES.e[f] - FRAMES.b[f])}`;
});
viewListeners.push(drawFrames);
