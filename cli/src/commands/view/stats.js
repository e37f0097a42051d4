// stats.js: the statistics table of `utrace report` (per kind of range: count, total, mean,
// p50/p90/p99, max, busy%) for the ranges that overlap the visible window, counted whole
// as the report counts them; recomputed once the window settles after a zoom or pan.
// busy% is the share of the GPU busy time (the time covered by any of those ranges, per
// queue, summed) during which a range of the kind ran: nested ranges of one kind (labels
// inside labels) count once, so it is at most 100%.
"use strict";

const statsBody = document.querySelector("#stats tbody");
const statsCaption = document.getElementById("stats-caption");
let statsCount = 0, statsMs = 0;

// The union of two lists of sorted, disjoint intervals [b0, e0, b1, e1, ...]: sorted, disjoint.
function union(a, b) {
  const out = [];
  let i = 0, j = 0;
  while (i < a.length || j < b.length) {
    let s, e;
    if (j >= b.length || (i < a.length && a[i] <= b[j])) { s = a[i]; e = a[i + 1]; i += 2; } else { s = b[j]; e = b[j + 1]; j += 2; }
    if (out.length && s <= out[out.length - 1]) out[out.length - 1] = Math.max(out[out.length - 1], e);
    else out.push(s, e);
  }
  return out;
}

// The time covered by a lane's rows (each a sorted, disjoint list): overlaps counted once.
function coveredTime(lists) {
  const all = lists.reduce(union, []);
  let total = 0;
  for (let k = 0; k < all.length; k += 2) total += all[k + 1] - all[k];
  return total;
}

function computeStats() {
  const started = performance.now();
  // Each row's visible slice [from, to) of range indices, found once.
  const slices = ROWS.map((row) => {
    let to = firstEndingAfter(row, state.t0);
    const from = to;
    while (to < row.count && rBegin[row.first + to] <= state.t1) to++;
    return [row.first + from, row.first + to];
  });
  // Durations per kind into typed arrays sized by a first count (no growing arrays).
  const counts = new Uint32Array(KINDS.length);
  for (const [from, to] of slices) for (let i = from; i < to; i++) counts[rKind[i]]++;
  const perKind = Array.from(counts, (n) => new Float64Array(n));
  counts.fill(0);
  const laneSpans = LANES.map(() => []);
  // Per kind and lane (kind * LANES.length + lane), each row's spans of that kind.
  const kindSpans = new Map();
  // A row's ranges do not overlap: only touching ones merge here.
  const add = (spans, b, e) => {
    if (spans.length && b <= spans[spans.length - 1]) spans[spans.length - 1] = Math.max(spans[spans.length - 1], e);
    else spans.push(b, e);
  };
  slices.forEach(([from, to], r) => {
    const spans = [];
    const byKind = new Map();
    for (let i = from; i < to; i++) {
      perKind[rKind[i]][counts[rKind[i]]++] = rEnd[i] - rBegin[i];
      add(spans, rBegin[i], rEnd[i]);
      let own = byKind.get(rKind[i]);
      if (!own) byKind.set(rKind[i], own = []);
      add(own, rBegin[i], rEnd[i]);
    }
    laneSpans[ROWS[r].lane].push(spans);
    byKind.forEach((own, kind) => {
      const key = kind * LANES.length + ROWS[r].lane;
      if (!kindSpans.has(key)) kindSpans.set(key, []);
      kindSpans.get(key).push(own);
    });
  });
  const busy = laneSpans.reduce((sum, lists) => sum + coveredTime(lists), 0);
  const covered = new Float64Array(KINDS.length);
  kindSpans.forEach((lists, key) => { covered[Math.floor(key / LANES.length)] += coveredTime(lists); });
  const rows = [];
  perKind.forEach((sorted, kind) => {
    if (!sorted.length) return;
    sorted.sort();
    let total = 0;
    for (let k = 0; k < sorted.length; k++) total += sorted[k];
    rows.push({kind, count: sorted.length, total, covered: covered[kind], mean: total / sorted.length,
               p50: rank(sorted, 50), p90: rank(sorted, 90), p99: rank(sorted, 99),
               max: sorted[sorted.length - 1]});
  });
  rows.sort((a, b) => b.total - a.total || KINDS[a.kind].localeCompare(KINDS[b.kind]));
  statsMs = performance.now() - started;
  return {rows, busy};
}

function us(ns) { return (ns / 1000).toFixed(1); }

function showStats(final) {
  if (!final) { statsCaption.textContent = "…"; return; }
  const {rows, busy} = computeStats();
  statsBody.textContent = "";
  statsCount = 0;
  for (const r of rows) {
    statsCount += r.count;
    const tr = document.createElement("tr");
    const cells = [KINDS[r.kind], r.count, us(r.total), us(r.mean), us(r.p50), us(r.p90), us(r.p99),
                   us(r.max), busy ? (100 * r.covered / busy).toFixed(1) : "-"];
    cells.forEach((c, k) => {
      const td = document.createElement("td");
      td.textContent = String(c);
      if (k === 0) {
        const swatch = document.createElement("span");
        swatch.className = "swatch"; swatch.style.background = COLOURS[r.kind];
        td.prepend(swatch);
      }
      tr.appendChild(td);
    });
    statsBody.appendChild(tr);
  }
  statsCaption.textContent =
    `${statsCount} ranges overlap ${fmt(state.t0)} – ${fmt(state.t1)} (${fmt(state.t1 - state.t0)}); ` +
    `GPU busy ${fmt(busy)} (time covered by any range, per queue); times in µs`;
  document.body.dataset.statsCount = String(statsCount);
  document.body.dataset.statsRows = String(rows.length);
}
viewListeners.push(showStats);
