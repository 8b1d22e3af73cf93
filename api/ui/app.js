// The platform's web UI: plain JavaScript over the HTTP API (docs/API.md).
// It polls the API every second; every value from the API goes into the
// page as text, never as markup.
"use strict";

const refreshEvery = 1000;
const checkpointsEvery = 5000;
const maxCheckpoints = 20;
const svgNS = "http://www.w3.org/2000/svg";
const $ = id => document.getElementById(id);

const token = $("token");
token.value = sessionStorage.getItem("token") || "";
token.onchange = () => { sessionStorage.setItem("token", token.value); refresh(); };

// request calls the API and returns the decoded body; a problem becomes an
// Error whose message is the problem's detail and whose status is kept.
async function request(method, path, body, type) {
  const headers = token.value ? {Authorization: "Bearer " + token.value} : {};
  if (type) headers["Content-Type"] = type;
  const res = await fetch(path, {method, headers, body});
  const text = await res.text();
  const data = text ? JSON.parse(text) : null;
  if (!res.ok) {
    const err = new Error((data && data.detail) || res.statusText);
    err.status = res.status;
    err.problemType = data && data.type;
    throw err;
  }
  return data;
}
const get = path => request("GET", path);

function el(tag, text, className) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  if (className) e.className = className;
  return e;
}

function row(cells, numeric) {
  const tr = document.createElement("tr");
  cells.forEach((c, i) => {
    const td = c instanceof Node ? wrap(c) : el("td", c);
    if (numeric && numeric.includes(i)) td.classList.add("num");
    tr.append(td);
  });
  return tr;
}

function wrap(node) {
  const td = document.createElement("td");
  td.append(node);
  return td;
}

const fixed = (x, digits) => (x === undefined || x === null) ? "" : Number(x).toFixed(digits);
const level = l => el("span", l || "–", "level " + (l || ""));
const watermark = ms => (ms === undefined || ms === null) ? "–" : new Date(ms).toISOString();

// state is what the page shows: the selected job and the previous counts
// that give records per second.
const state = {jobId: null, prev: null, rates: {}, lastCheckpoints: 0};

function route() {
  const m = location.hash.match(/^#\/jobs\/([^/]+)$/);
  state.jobId = m ? decodeURIComponent(m[1]) : null;
  state.prev = null;
  state.rates = {};
  state.lastCheckpoints = 0;
  $("overview").hidden = state.jobId !== null;
  $("job").hidden = state.jobId === null;
  refresh();
}

async function refresh() {
  $("error").textContent = "";
  try {
    if (state.jobId === null) {
      await Promise.all([showJobs(), showModules()]);
    } else {
      await showJob(state.jobId);
    }
    $("status").textContent = "updated " + new Date().toLocaleTimeString();
  } catch (e) {
    $("error").textContent = e.message;
  }
}

async function showJobs() {
  const {jobs} = await get("/v1/jobs");
  $("no-jobs").hidden = jobs.length > 0;
  $("jobs").replaceChildren(...jobs.map(j => {
    const tr = row([j.name, el("span", j.state, "state " + j.state), j.id, j.created]);
    tr.dataset.id = j.id;
    tr.dataset.state = j.state;
    tr.onclick = () => { location.hash = "#/jobs/" + encodeURIComponent(j.id); };
    return tr;
  }));
}

async function showModules() {
  const {modules} = await get("/v1/modules");
  $("modules").replaceChildren(...modules.map(m => row([m.id, (m.names || []).join(", "), m.size,
    (m.functions || []).map(f => f.name + " (" + f.kind + ")").join(", "),
    (m.used_by || []).join(", ")], [2])));
}

async function showJob(id) {
  const [job, bp] = await Promise.all([get("/v1/jobs/" + encodeURIComponent(id)),
    get("/v1/jobs/" + encodeURIComponent(id) + "/backpressure")]);
  updateRates(job);
  $("job-name").textContent = job.name;
  $("job-state").textContent = job.state;
  $("job-state").className = "state " + job.state;
  $("job-id").textContent = job.id;
  $("job-created").textContent = job.created;
  $("job-ended").textContent = (job.ended ? "· ended " + job.ended : "") +
    (job.restarts ? " · restarted " + job.restarts + " times" : "");
  $("warnings").hidden = !job.warnings;
  $("warnings").replaceChildren(...(job.warnings || []).map(w => el("li", w)));
  $("cancel").hidden = ["FINISHED", "FAILED", "CANCELED"].includes(job.state);
  const b = bp.bottleneck;
  $("bottleneck").hidden = !b;
  $("bottleneck").textContent = b ? "Bottleneck: vertex " + b.vertex + " (task " + b.task + ", subtasks " +
    b.subtasks.join(", ") + "). " + b.reason : "";
  const byVertex = Object.fromEntries(bp.vertices.map(v => [v.id, v]));
  drawGraph(job, byVertex, b);
  $("vertices").replaceChildren(...job.vertices.map(v => {
    const p = byVertex[v.id] || {subtasks: []};
    const busy = Math.max(0, ...p.subtasks.map(s => s.vertex_busy_ratio));
    const r = state.rates[v.id] || {};
    return row([v.id, v.kind, v.parallelism, v.task, v.records_in, fixed(r.in, 0), v.records_out, fixed(r.out, 0),
      level(p.level), p.subtasks.length ? fixed(busy, 2) : "–", watermark(v.watermark)], [2, 4, 5, 6, 7]);
  }));
  $("subtasks").replaceChildren(...bp.vertices.flatMap(v => v.subtasks.map(s => row([v.id, s.subtask, level(s.level),
    fixed(s.ratio, 2), fixed(s.idle_ratio, 2), fixed(s.busy_ratio, 2), fixed(s.vertex_busy_ratio, 2),
    fixed(s.in_pool_usage, 2), fixed(s.out_pool_usage, 2)], [1, 3, 4, 5, 6, 7, 8]))));
  $("failure").hidden = !job.failure;
  $("failure").textContent = job.failure || "";
  const failing = job.vertices.filter(v => v.udf_errors || v.skipped || v.dead_lettered);
  $("errors-table").hidden = failing.length === 0;
  $("no-errors").hidden = failing.length > 0 || Boolean(job.failure);
  $("errors").replaceChildren(...failing.map(v => row([v.id, v.udf_errors, v.skipped, v.dead_lettered], [1, 2, 3])));
  if (Date.now() - state.lastCheckpoints >= checkpointsEvery) {
    state.lastCheckpoints = Date.now();
    await showCheckpoints(id);
  }
}

// updateRates turns the change of each vertex's counts since the last poll
// into records per second.
function updateRates(job) {
  const now = performance.now();
  const counts = Object.fromEntries(job.vertices.map(v => [v.id, {in: v.records_in, out: v.records_out}]));
  if (state.prev && now > state.prev.at) {
    const secs = (now - state.prev.at) / 1000;
    for (const [id, c] of Object.entries(counts)) {
      const p = state.prev.counts[id];
      if (p) state.rates[id] = {in: (c.in - p.in) / secs, out: (c.out - p.out) / secs};
    }
  }
  state.prev = {at: now, counts};
}

// showCheckpoints shows the newest checkpoints first; durations (the API's
// *_ns fields) in milliseconds.
async function showCheckpoints(id) {
  const box = $("checkpoints");
  try {
    const data = await get("/v1/jobs/" + encodeURIComponent(id) + "/checkpoints");
    const list = (data.checkpoints || []).slice(-maxCheckpoints).reverse();
    if (list.length === 0) {
      box.replaceChildren(el("p", "No checkpoint yet.", "hint"));
      return;
    }
    const keys = Object.keys(list[0]);
    const table = el("table", null, "list");
    const head = document.createElement("thead");
    head.append(row(keys.map(k => k.endsWith("_ns") ? k.slice(0, -3) + " (ms)" : k)));
    const body = document.createElement("tbody");
    body.append(...list.map(c => row(keys.map(k => k.endsWith("_ns") ? fixed(c[k] / 1e6, 1) : c[k]))));
    table.append(head, body);
    box.replaceChildren(table);
  } catch (e) {
    // 404 without a problem type: this server has no checkpoint routes;
    // 409: the job takes no checkpoints.
    if ((e.status === 404 && e.problemType === "about:blank") || e.status === 409) {
      box.replaceChildren(el("p", e.status === 409 ? e.message : "This server keeps no checkpoint history.", "hint"));
      return;
    }
    throw e;
  }
}

// drawGraph lays the vertices out in columns by their distance from the
// sources and draws the edges between them.
function drawGraph(job, byVertex, bottleneck) {
  const svg = $("graph");
  const W = 190, H = 78, gapX = 70, gapY = 24, pad = 16;
  const vs = job.vertices;
  const edges = job.edges || [];
  const layer = Object.fromEntries(vs.map(v => [v.id, 0]));
  for (let pass = 0; pass < vs.length; pass++) {
    for (const e of edges) layer[e.to] = Math.max(layer[e.to], layer[e.from] + 1);
  }
  const rows = {};
  const pos = {};
  for (const v of vs) {
    const l = layer[v.id];
    rows[l] = (rows[l] || 0) + 1;
    pos[v.id] = {x: pad + l * (W + gapX), y: pad + (rows[l] - 1) * (H + gapY)};
  }
  const width = pad * 2 + (Math.max(0, ...Object.values(layer)) + 1) * (W + gapX) - gapX;
  const height = pad * 2 + Math.max(1, ...Object.values(rows)) * (H + gapY) - gapY;
  svg.setAttribute("width", width);
  svg.setAttribute("height", height);
  svg.setAttribute("viewBox", "0 0 " + width + " " + height);
  const defs = svgEl("defs");
  const marker = svgEl("marker", {id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto"});
  marker.append(svgEl("path", {d: "M0,0 L10,5 L0,10 z", fill: "#555"}));
  defs.append(marker);
  const parts = [defs];
  for (const e of edges) {
    const a = pos[e.from], b = pos[e.to];
    if (!a || !b) continue;
    const x1 = a.x + W, y1 = a.y + H / 2, x2 = b.x, y2 = b.y + H / 2, mx = (x1 + x2) / 2;
    parts.push(svgEl("path", {d: `M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2},${y2}`,
      class: "edge" + (e.chained ? " chained" : ""), "marker-end": "url(#arrow)"}));
    const label = svgEl("text", {x: mx, y: (y1 + y2) / 2 - 4, "text-anchor": "middle", class: "ship"});
    label.textContent = e.ship;
    parts.push(label);
  }
  for (const v of vs) {
    const p = pos[v.id];
    const b = byVertex[v.id];
    const lvl = b && b.level ? b.level.toLowerCase() : "none";
    const isBottleneck = bottleneck && bottleneck.vertex === v.id;
    const g = svgEl("g", {class: "vertex " + lvl + (isBottleneck ? " bottleneck" : ""),
      transform: `translate(${p.x},${p.y})`});
    g.dataset.id = v.id;
    g.dataset.level = b && b.level ? b.level : "";
    g.append(svgEl("rect", {width: W, height: H, rx: 6}));
    const r = state.rates[v.id];
    const lines = [
      [v.id + (isBottleneck ? "  ◆ bottleneck" : ""), isBottleneck ? "title flag" : "title"],
      [v.kind + " ×" + v.parallelism + (b && b.level ? " · " + b.level : ""), ""],
      [(r ? fixed(r.in, 0) : "–") + " in/s · " + (r ? fixed(r.out, 0) : "–") + " out/s", ""],
      ["watermark " + (v.watermark === undefined ? "–" : new Date(v.watermark).toISOString().slice(11, 23)), ""],
    ];
    lines.forEach(([text, cls], i) => {
      const t = svgEl("text", {x: 8, y: 17 + i * 17, class: cls});
      t.textContent = text;
      g.append(t);
    });
    parts.push(g);
  }
  svg.replaceChildren(...parts);
}

function svgEl(tag, attrs) {
  const e = document.createElementNS(svgNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  return e;
}

$("submit-form").onsubmit = async ev => {
  ev.preventDefault();
  $("submit-result").textContent = "";
  try {
    const job = await request("POST", "/v1/jobs", $("spec").value, "application/yaml");
    location.hash = "#/jobs/" + encodeURIComponent(job.id);
  } catch (e) {
    $("submit-result").textContent = e.message;
  }
};

$("wasm").onchange = async () => {
  const file = $("wasm").files[0];
  if (!file) return;
  $("upload-result").textContent = "uploading…";
  try {
    const name = $("module-name").value.trim();
    const path = "/v1/modules" + (name ? "?name=" + encodeURIComponent(name) : "");
    const mod = await request("POST", path, file, "application/wasm");
    $("upload-result").textContent = "uploaded " + mod.id + (mod.version ? " as " + mod.version : "");
    await showModules();
  } catch (e) {
    $("upload-result").textContent = e.message;
  }
  $("wasm").value = "";
};

$("cancel").onclick = async () => {
  try {
    await request("POST", "/v1/jobs/" + encodeURIComponent(state.jobId) + "/cancel");
    await refresh();
  } catch (e) {
    $("error").textContent = e.message;
  }
};

window.addEventListener("hashchange", route);
route();
setInterval(refresh, refreshEvery);
