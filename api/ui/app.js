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

// call calls the API and returns the response's text; a problem becomes an
// Error whose message is the problem's detail and whose status and type are
// kept.
async function call(method, path, body, type) {
  const headers = token.value ? {Authorization: "Bearer " + token.value} : {};
  if (type) headers["Content-Type"] = type;
  const res = await fetch(path, {method, headers, body});
  const text = await res.text();
  if (!res.ok) {
    let data = null;
    try { data = JSON.parse(text); } catch { /* not a problem document */ }
    const err = new Error((data && data.detail) || res.statusText);
    err.status = res.status;
    err.problemType = data && data.type;
    throw err;
  }
  return text;
}

// request calls the API and returns the decoded JSON body.
async function request(method, path, body, type) {
  const text = await call(method, path, body, type);
  return text ? JSON.parse(text) : null;
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
// watermark shows milliseconds as a time; beyond what a Date holds, the
// watermark of an input that ended (the largest int64) or the least one.
function watermark(ms) {
  if (ms === undefined || ms === null) return "–";
  if (Math.abs(ms) > 8.64e15) return ms > 0 ? "end of input" : "minimum";
  return new Date(ms).toISOString();
}
const jobPath = id => "/v1/jobs/" + encodeURIComponent(id);
const jobHash = id => "#/jobs/" + encodeURIComponent(id);
const terminal = s => ["FINISHED", "FAILED", "CANCELED"].includes(s);

// bytes says a size in B, KiB or MiB.
function bytes(n) {
  if (n < 1024) return n.toFixed(0) + " B";
  if (n < 1024 * 1024) return (n / 1024).toFixed(1) + " KiB";
  return (n / 1024 / 1024).toFixed(1) + " MiB";
}

// noRoute: the server has no such route or method (404 without a problem
// type, or 405): it predates the route, so the page does without it.
const noRoute = e => (e.status === 404 && e.problemType === "about:blank") || e.status === 405;

// caps says which optional routes the server has, from its OpenAPI
// document: GET /v1/jobs/{id}/spec, DELETE /v1/jobs/{id} and GET
// /v1/workers. null: not known yet (the document is read again on the next
// refresh).
const caps = {spec: null, remove: null, workers: null};

async function loadCaps() {
  if (caps.remove !== null) return;
  try {
    const paths = (await get("/v1/openapi.json")).paths || {};
    caps.spec = Boolean(paths["/v1/jobs/{id}/spec"] && paths["/v1/jobs/{id}/spec"].get);
    caps.remove = Boolean(paths["/v1/jobs/{id}"] && paths["/v1/jobs/{id}"].delete);
    caps.workers = Boolean(paths["/v1/workers"] && paths["/v1/workers"].get);
  } catch (e) {
    if (e.status !== 401 && e.status !== 403) caps.remove = false;
  }
}

// Specs this page submitted, by job id, for a server without
// GET /v1/jobs/{id}/spec: kept for the browser tab.
const keptSpec = id => sessionStorage.getItem("spec:" + id);
const keepSpec = (id, text) => sessionStorage.setItem("spec:" + id, text);

// state is what the page shows: the selected job, the previous counts that
// give records per second, and what is fetched less often than every second.
const state = {jobId: null, gen: 0, prev: null, rates: {}, lastCheckpoints: 0, lastState: "",
  spec: undefined, savepoints: []};

function route() {
  const m = location.hash.match(/^#\/jobs\/([^/]+)$/);
  state.jobId = m ? decodeURIComponent(m[1]) : null;
  state.gen++;
  state.prev = null;
  state.rates = {};
  state.lastCheckpoints = 0;
  state.lastState = "";
  state.spec = undefined;
  state.savepoints = [];
  $("action-result").textContent = "";
  $("overview").hidden = state.jobId !== null;
  $("job").hidden = state.jobId === null;
  refresh();
}

// refresh runs one poll at a time; a call during one runs again after it.
let refreshing = false, again = false;
async function refresh() {
  again = refreshing;
  if (refreshing) return;
  refreshing = true;
  do {
    again = false;
    await refreshOnce(); // never throws
  } while (again);
  refreshing = false;
}

async function refreshOnce() {
  try {
    await loadCaps();
    if (state.jobId === null) {
      const [{jobs}, workers] = await Promise.all([get("/v1/jobs"), loadWorkers(), showModules()]);
      showJobs(jobs, workers.length > 0 || jobs.some(j => j.worker));
      showWorkers(workers, jobs);
    } else {
      await showJob(state.jobId, state.gen);
    }
    $("error").textContent = "";
    $("status").textContent = "updated " + new Date().toLocaleTimeString();
  } catch (e) {
    $("error").textContent = e.message;
  }
}

// showJobs lists the jobs; in cluster mode with the worker that runs each
// (none for a job that has ended).
function showJobs(jobs, clustered) {
  $("no-jobs").hidden = jobs.length > 0;
  $("jobs-worker-head").hidden = !clustered;
  $("jobs").replaceChildren(...jobs.map(j => {
    const tr = row([j.name, el("span", j.state, "state " + j.state), j.id, j.created]);
    const worker = el("td", j.worker || "–", "worker");
    worker.hidden = !clustered;
    tr.append(worker);
    tr.dataset.id = j.id;
    tr.dataset.state = j.state;
    tr.dataset.worker = j.worker || "";
    tr.onclick = () => { location.hash = jobHash(j.id); };
    return tr;
  }));
}

// loadWorkers is the cluster's workers: empty outside cluster mode, and on
// a server without GET /v1/workers.
async function loadWorkers() {
  if (caps.workers === false) return [];
  try {
    return (await get("/v1/workers")).workers || [];
  } catch (e) {
    if (!noRoute(e)) throw e;
    caps.workers = false;
    return [];
  }
}

// showWorkers lists the workers, a dead one marked, with the slots their
// jobs take of the slots they have and the jobs each runs, each a link to
// the job's page; the panel is shown only when there are workers (cluster
// mode).
function showWorkers(workers, jobs) {
  const names = new Map(jobs.map(j => [j.id, j.name]));
  $("workers-panel").hidden = workers.length === 0;
  $("workers").replaceChildren(...workers.map(w => {
    const id = el("span", w.id);
    id.title = "started " + w.started;
    const alive = el("span", w.alive ? "alive" : "dead", "state " + (w.alive ? "alive" : "dead"));
    alive.title = "last heartbeat seen " + w.last_seen;
    const slots = el("span", w.used + "/" + w.slots, w.used > w.slots ? "over" : "");
    if (w.used > w.slots) slots.title = "its jobs take more slots than it has (it took jobs over)";
    if (!w.alive) slots.title = "as its last heartbeat said";
    const list = el("span", (w.jobs || []).length ? null : "–", "worker-jobs");
    (w.jobs || []).forEach((job, i) => {
      const a = el("a", names.get(job) || job);
      a.href = jobHash(job);
      a.title = job;
      a.dataset.id = job;
      if (i > 0) list.append(", ");
      list.append(a);
    });
    const tr = row([id, w.addr, alive, slots, w.version, list], [3]);
    tr.dataset.id = w.id;
    tr.dataset.alive = String(Boolean(w.alive));
    if (!w.alive) tr.classList.add("dead");
    return tr;
  }));
}

// showModules names each module by its names (name@version) when it has
// any, else by its id (the id is the cell's tooltip either way).
async function showModules() {
  const {modules} = await get("/v1/modules");
  $("modules").replaceChildren(...modules.map(m => {
    const name = el("span", (m.names || []).join(", ") || m.id);
    name.title = m.id;
    const tr = row([name, m.size, (m.functions || []).map(f => f.name + " (" + f.kind + ")").join(", "),
      (m.used_by || []).join(", ")], [1]);
    tr.dataset.id = m.id;
    return tr;
  }));
}

// loadSpec is the job's spec: the API's (GET /v1/jobs/{id}/spec), or the
// one this page submitted, or null.
async function loadSpec(id) {
  if (caps.spec !== false) {
    try {
      return {text: await call("GET", jobPath(id) + "/spec"), from: "api"};
    } catch (e) {
      if (noRoute(e)) caps.spec = false;
      else if (e.status !== 404) throw e;
    }
  }
  const kept = keptSpec(id);
  return kept === null ? null : {text: kept, from: "page"};
}

async function showJob(id, gen) {
  const [job, bp] = await Promise.all([get(jobPath(id)), get(jobPath(id) + "/backpressure")]);
  if (state.spec === undefined) state.spec = await loadSpec(id);
  if (gen !== state.gen) return; // the page moved on meanwhile
  updateRates(job);
  const failed = job.failure ? failingVertex(job, job.failure) : "";
  $("job-name").textContent = job.name;
  $("job-state").textContent = job.state;
  $("job-state").className = "state " + job.state;
  $("job-id").textContent = job.id;
  $("job-created").textContent = job.created;
  $("job-ended").textContent = (job.ended ? "· ended " + job.ended : "") +
    (job.restarts ? " · restarted " + job.restarts + " times" : "");
  $("job-worker").textContent = job.worker ? "· on worker " + job.worker : "";
  $("warnings").hidden = !job.warnings;
  $("warnings").replaceChildren(...(job.warnings || []).map(w => el("li", w)));
  showActions(job);
  const b = bp.bottleneck;
  $("bottleneck").hidden = !b;
  $("bottleneck").textContent = b ? "Bottleneck: vertex " + b.vertex + " (task " + b.task + ", subtasks " +
    b.subtasks.join(", ") + "). " + b.reason : "";
  const byVertex = Object.fromEntries(bp.vertices.map(v => [v.id, v]));
  drawGraph(job, byVertex, b, failed);
  $("vertices").replaceChildren(...job.vertices.map(v => {
    const p = byVertex[v.id] || {subtasks: []};
    const busy = Math.max(0, ...p.subtasks.map(s => s.vertex_busy_ratio));
    const r = state.rates[v.id] || {};
    const tr = row([v.id, v.kind, v.parallelism, v.task, v.records_in, fixed(r.in, 0), v.records_out, fixed(r.out, 0),
      level(p.level), p.subtasks.length ? fixed(busy, 2) : "–", watermark(v.watermark)], [2, 4, 5, 6, 7]);
    tr.dataset.id = v.id;
    if (v.id === failed) tr.classList.add("failed");
    return tr;
  }));
  showSubtasks(bp);
  showCanary(job);
  showExceptions(job);
  await showQuarantine(job, gen);
  if (job.state !== state.lastState || Date.now() - state.lastCheckpoints >= checkpointsEvery) {
    state.lastState = job.state;
    state.lastCheckpoints = Date.now();
    await showCheckpoints(job, gen);
  }
  showSpec();
}

// showActions shows the buttons that apply to the job in its state.
function showActions(job) {
  const running = job.state === "RUNNING";
  const ended = terminal(job.state);
  const checkpoints = Boolean(job.checkpoint);
  $("savepoint").hidden = !(running && checkpoints);
  $("stop").hidden = !(running && checkpoints);
  $("cancel").hidden = ended;
  $("delete").hidden = !(ended && caps.remove);
  const done = state.savepoints.filter(s => s.status === "COMPLETED");
  const latest = done[done.length - 1];
  const resume = $("resume");
  resume.hidden = !(ended && latest && state.spec);
  resume.dataset.savepoint = latest ? latest.id : "";
  resume.title = latest ? "submit this job's spec again, starting from savepoint " + latest.id : "";
}

// showSubtasks lists every subtask's shares of time and, when the API gives
// it (a subtask's watermark), its watermark.
function showSubtasks(bp) {
  const any = bp.vertices.some(v => v.subtasks.some(s => s.watermark !== undefined));
  $("subtask-watermark-head").title = any ? "the subtask's watermark" :
    "the API gives no watermark per subtask, only the vertex's least one (Vertices above)";
  $("subtasks").replaceChildren(...bp.vertices.flatMap(v => v.subtasks.map(s => {
    const wm = el("span", watermark(s.watermark));
    wm.dataset.watermark = s.watermark === undefined ? "" : String(s.watermark);
    const tr = row([v.id, s.subtask, level(s.level), fixed(s.ratio, 2), fixed(s.idle_ratio, 2), fixed(s.busy_ratio, 2),
      fixed(s.vertex_busy_ratio, 2), fixed(s.in_pool_usage, 2), fixed(s.out_pool_usage, 2), wm], [1, 3, 4, 5, 6, 7, 8]);
    tr.dataset.vertex = v.id;
    tr.dataset.subtask = s.subtask;
    return tr;
  })));
}

// failingVertex is the vertex a failure names: the operator, source or sink
// in brackets ("task in: operator[m]: ..."), else the task ("task in: ...",
// a task being named by its first vertex), else "".
function failingVertex(job, failure) {
  const ids = new Set(job.vertices.map(v => v.id));
  for (const m of failure.matchAll(/\b(?:operator|source|sink)\[([^\]]+)\]/g)) {
    if (ids.has(m[1])) return m[1];
  }
  const t = failure.match(/^task ([^\s:[]+)/);
  return t && ids.has(t[1]) ? t[1] : "";
}

// showExceptions shows the job's last failure and its exception history
// as the API keeps it, newest first.
function showExceptions(job) {
  const entries = job.exceptions || [];
  $("failure").hidden = !job.failure;
  $("failure").textContent = job.failure || "";
  $("exceptions-table").hidden = entries.length === 0;
  $("exceptions").replaceChildren(...entries.map(x => {
    const vertex = failingVertex(job, x.error);
    const subtask = x.task === undefined ? "–" : x.task + "[" + x.subtask + "]";
    const tr = row([x.time, x.action, x.attempt || "–", x.action === "restart" ? x.delay_ms + " ms" : "–", subtask,
      vertex || "–", el("pre", x.error)], [2, 3]);
    tr.dataset.vertex = vertex;
    tr.dataset.action = x.action;
    return tr;
  }));
  const failing = job.vertices.filter(v => v.udf_errors || v.skipped || v.dead_lettered);
  $("errors-table").hidden = failing.length === 0;
  $("no-errors").hidden = failing.length > 0 || Boolean(job.failure);
  $("errors").replaceChildren(...failing.map(v => row([v.id, v.udf_errors, v.skipped, v.dead_lettered], [1, 2, 3])));
}

// showCanary shows the canary the job runs, if any: its key groups and
// modules, and each version's figures of every vertex it changes.
function showCanary(job) {
  const c = job.canary;
  $("canary").hidden = !c;
  if (!c) return;
  $("canary-summary").textContent = "Key groups " + c.key_groups + " run " +
    c.modules.map(m => m.version || m.id).join(", ") + "; promote or roll back with platform job promote / rollback " + job.id + ".";
  $("canary-figures").replaceChildren(...c.figures.map(f => row([f.vertex, f.version, f.subtasks.join(", "), f.records_in, f.records_out,
    f.udf_errors, f.calls, fixed(f.mean_call_seconds * 1000, 3)], [3, 4, 5, 6, 7])));
}

// showQuarantine lists the keys the job parked, each with a button that
// releases it; an ended job, or a server without the route, has none.
async function showQuarantine(job, gen) {
  let keys = [];
  if (!terminal(job.state)) {
    try {
      keys = (await get(jobPath(job.id) + "/quarantine")).keys;
    } catch (e) {
      if (e.status !== 404 && e.status !== 409) throw e;
    }
  }
  if (gen !== state.gen) return;
  $("quarantine-table").hidden = keys.length === 0;
  $("no-quarantine").hidden = keys.length > 0;
  $("quarantine").replaceChildren(...keys.map(k => {
    const release = el("button", "Release");
    release.type = "button";
    release.title = "replay the " + k.kept + " kept records of this key through " + k.operator + ", in order";
    release.onclick = async () => {
      const result = $("quarantine-result");
      try {
        // By its base64url: a key that is not UTF-8 text reaches the page
        // with U+FFFD in its text, which would name another key.
        await request("POST", jobPath(job.id) + "/quarantine/" + k.key_base64 + "/release?key_encoding=base64url");
        result.textContent = "key " + k.key + " released: " + k.kept + " records replayed";
      } catch (e) {
        result.textContent = e.message;
      }
    };
    const key = k.key.includes("\ufffd") ? k.key + " (base64url " + k.key_base64 + ")" : k.key;
    const tr = row([k.operator, k.subtask, key, k.failures, k.parked, k.kept, k.overflow, el("pre", k.first_error), release], [1, 3, 4, 5, 6]);
    tr.dataset.key = k.key;
    return tr;
  }));
}

function showSpec() {
  const spec = state.spec;
  $("job-spec").hidden = !spec;
  $("job-spec").textContent = spec ? spec.text : "";
  $("spec-source").textContent = !spec ?
    "The server does not give this job's spec (GET /v1/jobs/{id}/spec), and this page did not submit it." :
    spec.from === "api" ? "As submitted (GET /v1/jobs/{id}/spec)." :
      "As this page submitted it (the server does not give a job's spec).";
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

// showCheckpoints shows the summary of the completed checkpoints, the
// savepoints, and the newest checkpoints first; durations (the API's *_ns
// fields) in milliseconds.
async function showCheckpoints(job, gen) {
  const box = $("checkpoints");
  const hint = text => {
    box.replaceChildren(el("p", text, "hint"));
    $("checkpoint-summary").replaceChildren();
    $("savepoints").replaceChildren();
  };
  if (!job.checkpoint) return hint("This job takes no checkpoints.");
  let data, sps;
  try {
    [data, sps] = await Promise.all([get(jobPath(job.id) + "/checkpoints"), get(jobPath(job.id) + "/savepoints")]);
  } catch (e) {
    // No checkpoint routes on this server (a 404 without a problem type), or
    // the job takes no checkpoints (409).
    if (noRoute(e) || e.status === 409) return hint(e.status === 409 ? e.message : "This server keeps no checkpoint history.");
    throw e;
  }
  if (gen !== state.gen) return;
  const all = data.checkpoints || [];
  state.savepoints = sps.savepoints || [];
  showActions(job);
  showSummary(all);
  showSavepoints(state.savepoints);
  const list = all.slice(-maxCheckpoints).reverse();
  if (list.length === 0) {
    box.replaceChildren(el("p", "No checkpoint yet.", "hint"));
    return;
  }
  box.replaceChildren(table(list, ["id", "kind", "status", "triggered", "duration_ns", "size", "alignment_ns",
    "in_flight_bytes", "failure"]));
}

// table lists objects by keys, those that any of them has; *_ns in ms.
function table(list, keys) {
  keys = keys.filter(k => list.some(c => c[k] !== undefined));
  const t = el("table", null, "list");
  const head = document.createElement("thead");
  head.append(row(keys.map(k => k.endsWith("_ns") ? k.slice(0, -3) + " (ms)" : k)));
  const body = document.createElement("tbody");
  body.append(...list.map(c => row(keys.map(k => k.endsWith("_ns") ? fixed(c[k] / 1e6, 1) : c[k]))));
  t.append(head, body);
  return t;
}

// summaryFields are what the checkpoint summary sums up, and how to show it.
const summaryFields = [
  ["duration_ns", "duration", x => fixed(x / 1e6, 1) + " ms"],
  ["size", "size", bytes],
  ["alignment_ns", "alignment", x => fixed(x / 1e6, 1) + " ms"],
  ["in_flight_bytes", "in-flight data", bytes],
];

// showSummary gives the minimum, average and maximum of the completed
// checkpoints and savepoints in the history; each cell's data-value is the
// exact figure. The API has no per-task figures, so neither has the summary.
function showSummary(all) {
  const done = all.filter(c => c.status === "COMPLETED");
  const box = $("checkpoint-summary");
  if (done.length === 0) return box.replaceChildren();
  const t = el("table", null, "list");
  t.id = "summary-table";
  const head = document.createElement("thead");
  head.append(row(["", "min", "avg", "max"]));
  const body = document.createElement("tbody");
  for (const [key, name, show] of summaryFields) {
    const xs = done.map(c => c[key] || 0);
    const stats = {min: Math.min(...xs), avg: xs.reduce((a, b) => a + b, 0) / xs.length, max: Math.max(...xs)};
    const tr = row([name, ...Object.entries(stats).map(([stat, x]) => {
      const s = el("span", show(x));
      s.dataset.stat = stat;
      s.dataset.value = String(x);
      return s;
    })], [1, 2, 3]);
    tr.dataset.field = key;
    body.append(tr);
  }
  t.append(head, body);
  const failed = all.length - done.length - all.filter(c => c.status === "IN_PROGRESS").length;
  const caption = el("p", "Summary of the " + done.length + " completed checkpoints and savepoints listed" +
    (failed ? " (" + failed + " failed)" : "") + "; the API gives whole checkpoints, not figures per task.", "hint");
  caption.id = "summary-count";
  caption.dataset.count = String(done.length);
  box.replaceChildren(caption, t);
}

function showSavepoints(list) {
  $("savepoints").replaceChildren(...(list.length ? [el("h4", "Savepoints"),
    table(list.slice().reverse(), ["id", "status", "triggered", "duration_ns", "size", "stop", "failure"])] : []));
}

// The graph: boxes this big, spaced so.
const graphSize = {width: 190, height: 78, gapX: 70, gapY: 24, dummy: 12, pad: 16};

// drawGraph draws the job graph in the layered layout of layout.js: each
// vertex a box coloured by its backpressure level, each edge a polyline.
function drawGraph(job, byVertex, bottleneck, failed) {
  const svg = $("graph");
  const {width: W, height: H} = graphSize;
  const vs = job.vertices;
  const edges = (job.edges || []).filter(e => vs.some(v => v.id === e.from) && vs.some(v => v.id === e.to));
  const g = layoutGraph(vs, edges, graphSize);
  svg.setAttribute("width", g.width);
  svg.setAttribute("height", g.height);
  svg.setAttribute("viewBox", "0 0 " + g.width + " " + g.height);
  const defs = svgEl("defs");
  const marker = svgEl("marker", {id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto"});
  marker.append(svgEl("path", {d: "M0,0 L10,5 L0,10 z", fill: "#555"}));
  defs.append(marker);
  const parts = [defs];
  edges.forEach((e, i) => {
    const pts = g.edges[i];
    const line = svgEl("polyline", {points: pts.map(p => p.join(",")).join(" "),
      class: "edge" + (e.chained ? " chained" : ""), "marker-end": "url(#arrow)"});
    line.dataset.from = e.from;
    line.dataset.to = e.to;
    parts.push(line);
    const [[x1, y1], [x2, y2]] = pts;
    const label = svgEl("text", {x: (x1 + x2) / 2, y: (y1 + y2) / 2 - 4, "text-anchor": "middle", class: "ship"});
    label.textContent = e.ship;
    parts.push(label);
  });
  for (const v of vs) {
    const {x, y} = g.nodes[v.id];
    const b = byVertex[v.id];
    const lvl = b && b.level ? b.level.toLowerCase() : "none";
    const isBottleneck = bottleneck && bottleneck.vertex === v.id;
    const box = svgEl("g", {class: "vertex " + lvl + (isBottleneck ? " bottleneck" : "") + (v.id === failed ? " failed" : "")});
    box.dataset.id = v.id;
    box.dataset.level = b && b.level ? b.level : "";
    box.dataset.layer = g.layers[v.id];
    box.append(svgEl("rect", {x, y, width: W, height: H, rx: 6}));
    const r = state.rates[v.id];
    const lines = [
      [v.id + (isBottleneck ? "  ◆ bottleneck" : "") + (v.id === failed ? "  ✖ failed" : ""),
        isBottleneck || v.id === failed ? "title flag" : "title"],
      [v.kind + " ×" + v.parallelism + onWorkers(v) + (b && b.level ? " · " + b.level : ""), ""],
      [(r ? fixed(r.in, 0) : "–") + " in/s · " + (r ? fixed(r.out, 0) : "–") + " out/s", ""],
      ["watermark " + watermark(v.watermark).replace(/^\d{4}-\d\d-\d\dT(.*)Z$/, "$1"), ""],
    ];
    lines.forEach(([text, cls], i) => {
      const t = svgEl("text", {x: x + 8, y: y + 17 + i * 17, class: cls});
      t.textContent = text;
      box.append(t);
    });
    const tips = [];
    if (v.id === failed) tips.push("the last failure names this vertex");
    if (v.workers && v.workers.length) tips.push("subtasks on workers: " + v.workers.map((w, i) => i + ": " + w).join(", "));
    if (tips.length) {
      const tip = svgEl("title");
      tip.textContent = tips.join("\n");
      box.append(tip);
    }
    parts.push(box);
  }
  svg.replaceChildren(...parts);
}

// onWorkers names, in cluster mode, the workers a vertex's subtasks run
// on (each once; the box's tooltip lists them by subtask).
function onWorkers(v) {
  if (!v.workers || !v.workers.length) return "";
  return " on " + [...new Set(v.workers)].join(",");
}

function svgEl(tag, attrs) {
  const e = document.createElementNS(svgNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  return e;
}

// submit posts a spec (from a savepoint, when given) and opens the new job.
async function submit(spec, savepoint) {
  const q = savepoint ? "?from_savepoint=" + encodeURIComponent(savepoint) : "";
  const job = await request("POST", "/v1/jobs" + q, spec, "application/yaml");
  keepSpec(job.id, spec);
  location.hash = jobHash(job.id);
}

$("submit-form").onsubmit = async ev => {
  ev.preventDefault();
  $("submit-result").textContent = "";
  try {
    await submit($("spec").value);
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

// action runs one button's request and says how it went.
function action(button, run) {
  $(button).onclick = async () => {
    const result = $("action-result");
    result.textContent = "";
    try {
      result.textContent = await run();
      state.lastCheckpoints = 0; // show the savepoint soon
      await refresh();
    } catch (e) {
      result.textContent = e.message;
    }
  };
}

action("savepoint", async () => {
  const sp = await request("POST", jobPath(state.jobId) + "/savepoints");
  return "savepoint " + sp.id + " triggered";
});
action("stop", async () => {
  const sp = await request("POST", jobPath(state.jobId) + "/stop");
  return "stopping with savepoint " + sp.id;
});
action("cancel", async () => {
  await request("POST", jobPath(state.jobId) + "/cancel");
  return "cancelled";
});
action("resume", async () => {
  const sp = $("resume").dataset.savepoint;
  await submit(state.spec.text, sp);
  return "resumed from savepoint " + sp;
});
action("delete", async () => {
  try {
    await request("DELETE", jobPath(state.jobId));
  } catch (e) {
    if (noRoute(e)) {
      caps.remove = false;
      $("delete").hidden = true;
      return "this server cannot delete jobs";
    }
    if (e.status !== 404) throw e;
  }
  location.hash = "#/";
  return "deleted";
});

window.addEventListener("hashchange", route);
route();
setInterval(refresh, refreshEvery);
