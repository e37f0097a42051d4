// panel.js: the side panel (what is selected: a range's arguments, duration, batch, frame
// and pipeline; a submission's latency; a frame's GPU time), the search box (highlights
// ranges by name, label or pipeline) and the legend (a colour per kind; a click switches
// the kind off and on).
"use strict";

const panel = document.getElementById("panel-body");

// The panel's content: a heading and rows of [name, value].
function fillPanel(heading, rows, zoom) {
  panel.textContent = "";
  const h = document.createElement("h3");
  h.textContent = heading;
  panel.appendChild(h);
  const table = document.createElement("table");
  for (const [k, v] of rows) {
    const tr = table.insertRow();
    tr.insertCell().textContent = k;
    tr.insertCell().textContent = String(v);
  }
  panel.appendChild(table);
  if (zoom) {
    const button = document.createElement("button");
    button.textContent = "Zoom to it";
    button.addEventListener("click", () => { const [a, b] = zoom, m = (b - a) * 0.1 + 100; setView(a - m, b + m); });
    panel.appendChild(button);
  }
}

function batchRows(b) {
  const rows = [["batch", BATCHES.number[b]], ["frame", BATCHES.frame[b]],
                ["submission", BATCHES.submission[b]], ["device", BATCHES.device[b]]];
  if (BATCHES.thread[b] !== null) rows.push(["thread", BATCHES.thread[b]]);
  if (BATCHES.submit[b] !== null) {
    rows.push(["submitted at", fmt(BATCHES.submit[b])]);
    rows.push(["submit → GPU start", fmt(batchBegin[b] - BATCHES.submit[b])]);
  }
  return rows;
}

function showSelection() {
  const sel = state.selected;
  if (!sel) { panel.textContent = "Click a range, a submit marker or a frame."; return; }
  if (sel.range !== undefined) {
    const i = sel.range, kind = KINDS[rKind[i]];
    const rows = [["kind", kind], ["duration", fmt(rEnd[i] - rBegin[i])],
                  ["begin", fmt(rBegin[i])], ["end", fmt(rEnd[i])],
                  ["pipeline", rPipe[i] >= 0 ? STRINGS[rPipe[i]] : "-"],
                  ["queue", LANES[BATCHES.lane[rBatch[i]]].name], ...batchRows(rBatch[i])];
    for (const [k, v] of DATA.args[rArgs[i]]) rows.push(["· " + k, v]);
    fillPanel(STRINGS[rName[i]], rows, [rBegin[i], rEnd[i]]);
  } else if (sel.batch !== undefined) {
    const b = sel.batch;
    fillPanel(`submission ${BATCHES.submission[b]}`, batchRows(b), [BATCHES.submit[b], batchBegin[b]]);
  } else if (sel.frame !== undefined) {
    const f = sel.frame;
    fillPanel(`frame ${FRAMES.frame[f]}`, [
      ["device", FRAMES.device[f]], ["GPU time", fmt(FRAMES.gpu[f])],
      ["span", fmt(FRAMES.e[f] - FRAMES.b[f])], ["begins", fmt(FRAMES.b[f])],
      ["vs p50", (FRAMES.gpu[f] / Math.max(1, frameP50)).toFixed(2) + "×"],
    ], null);
  }
}

// Search: a range matches when its name (a label's text), its kind or its pipeline
// contains the text, case aside.
const searchBox = document.getElementById("search");
const searchCount = document.getElementById("search-count");
let searchMatches = 0;
function search(text) {
  const q = text.trim().toLowerCase();
  searchMatches = 0;
  if (!q) { state.matches = null; searchCount.textContent = ""; changed(); return; }
  const stringHits = Uint8Array.from(STRINGS, (s) => (s.toLowerCase().includes(q) ? 1 : 0));
  const matches = new Uint8Array(N);
  for (let i = 0; i < N; i++) {
    if (stringHits[rName[i]] || (rPipe[i] >= 0 && stringHits[rPipe[i]])) { matches[i] = 1; searchMatches += 1; }
  }
  state.matches = matches;
  searchCount.textContent = `${searchMatches} match${searchMatches === 1 ? "" : "es"}`;
  document.body.dataset.searchMatches = String(searchMatches);
  changed();
}
searchBox.addEventListener("input", () => search(searchBox.value));

// The legend: one button per kind, with how many of it the timeline draws now.
const legend = document.getElementById("legend");
const legendButtons = KINDS.map((kind, k) => {
  const b = document.createElement("button");
  b.className = "kind"; b.dataset.kind = kind;
  b.title = "Show or hide " + kind;
  const swatch = document.createElement("span");
  swatch.className = "swatch"; swatch.style.background = COLOURS[k];
  b.append(swatch, document.createTextNode(kind + " "), document.createElement("small"));
  b.addEventListener("click", () => {
    state.hidden[k] = state.hidden[k] ? 0 : 1;
    b.classList.toggle("off", !!state.hidden[k]);
    changed();
  });
  legend.appendChild(b);
  return b;
});
function updateLegend() {
  legendButtons.forEach((b, k) => { b.lastChild.textContent = String(drawnByKind[k]); });
}
viewListeners.push(updateLegend);
