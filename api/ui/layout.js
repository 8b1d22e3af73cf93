// A layered layout of a job graph, drawn left to right (after Sugiyama et al.,
// "Methods for visual understanding of hierarchical system structures", 1981):
//
//  1. Layering: each node's layer is the length of the longest path to it
//     from a source, so every edge points to a later layer.
//  2. Dummy nodes: an edge that spans more than one layer is split by a
//     dummy node in each layer it crosses. A dummy takes a slot in its layer's
//     column like a node does (a thinner one), so the edge passes through a
//     column only where no node is.
//  3. Ordering: sweeps down and up the layers sort each layer by the
//     barycentre (mean position) of its neighbours in the layer before or
//     after; the order with the fewest crossings between adjacent layers wins.
//  4. Coordinates: layers are columns; a column's slots are stacked top to
//     bottom and the column centred vertically.
//
// Every edge is a polyline: from its source's right side across the gap to
// the next column, through each dummy's slot horizontally, and across the
// last gap to its target's left side. A segment is thus either inside a gap
// between columns, where there are no nodes, or inside a dummy's slot, where
// there is no node: no edge is drawn through a node.
//
// The job graph is acyclic (the planner refuses cycles); should an edge point
// backwards anyway, it is drawn straight, with no such promise.
"use strict";

// layoutGraph places nodes ([{id}]) and routes edges ([{from, to}]).
// size: {width, height} of a node, gapX between columns, gapY between slots,
// dummy the height of a dummy's slot, pad around the drawing. It returns
// {nodes: {id: {x, y}}, edges: [[x, y], ...] for each edge in order, width,
// height, layers: {id: layer}}.
function layoutGraph(nodes, edges, size) {
  const {width: W, height: H, gapX, gapY, dummy, pad} = size;
  const ids = nodes.map(n => n.id);
  const known = new Set(ids);
  const es = edges.filter(e => known.has(e.from) && known.has(e.to));

  // 1. Longest-path layering over a topological order (Kahn's algorithm).
  const layer = Object.fromEntries(ids.map(id => [id, 0]));
  const indegree = Object.fromEntries(ids.map(id => [id, 0]));
  for (const e of es) indegree[e.to]++;
  const queue = ids.filter(id => indegree[id] === 0);
  while (queue.length) {
    const u = queue.shift();
    for (const e of es) {
      if (e.from !== u) continue;
      layer[e.to] = Math.max(layer[e.to], layer[u] + 1);
      if (--indegree[e.to] === 0) queue.push(e.to);
    }
  }

  // 2. The layered graph: real nodes, dummies, and edges between adjacent
  // layers. chains[i] lists the nodes edge i passes, ends included.
  const layers = [];
  const put = (id, l) => { (layers[l] = layers[l] || []).push(id); };
  for (const id of ids) put(id, layer[id]);
  const isDummy = new Set();
  const up = {}, down = {};
  const link = (a, b) => { (down[a] = down[a] || []).push(b); (up[b] = up[b] || []).push(a); };
  const chains = es.map((e, i) => {
    const chain = [e.from];
    for (let l = layer[e.from] + 1; l < layer[e.to]; l++) {
      const d = "\u0000dummy " + i + " " + l;
      isDummy.add(d);
      layer[d] = l;
      put(d, l);
      chain.push(d);
    }
    chain.push(e.to);
    if (layer[e.to] > layer[e.from]) {
      for (let k = 1; k < chain.length; k++) link(chain[k - 1], chain[k]);
    }
    return chain;
  });
  for (let l = 0; l < layers.length; l++) layers[l] = layers[l] || [];

  // 3. Barycentric ordering.
  let order = layers.map(ids => ids.slice());
  const positions = ord => {
    const p = {};
    for (const ids of ord) ids.forEach((id, i) => { p[id] = i; });
    return p;
  };
  const crossings = ord => {
    const p = positions(ord);
    let n = 0;
    for (let l = 0; l + 1 < ord.length; l++) {
      const pairs = ord[l].flatMap(a => (down[a] || []).map(b => [p[a], p[b]]));
      for (let i = 0; i < pairs.length; i++) {
        for (let j = i + 1; j < pairs.length; j++) {
          if ((pairs[i][0] - pairs[j][0]) * (pairs[i][1] - pairs[j][1]) < 0) n++;
        }
      }
    }
    return n;
  };
  // sortLayer orders ord[l] by the mean position of each node's neighbours
  // (nbrs) in the adjacent layer; a node without any keeps its position.
  const sortLayer = (ord, l, nbrs) => {
    const p = positions(ord);
    const key = id => {
      const ns = nbrs[id] || [];
      return ns.length ? ns.reduce((s, n) => s + p[n], 0) / ns.length : p[id];
    };
    const keyed = ord[l].map(id => [key(id), id]);
    keyed.sort((a, b) => a[0] - b[0]); // stable: ties keep their order
    ord[l] = keyed.map(k => k[1]);
  };
  let best = order.map(ids => ids.slice()), fewest = crossings(order);
  for (let sweep = 0; sweep < 8 && fewest > 0; sweep++) {
    for (let l = 1; l < order.length; l++) sortLayer(order, l, up);
    for (let l = order.length - 2; l >= 0; l--) sortLayer(order, l, down);
    const n = crossings(order);
    if (n < fewest) { fewest = n; best = order.map(ids => ids.slice()); }
  }
  order = best;

  // 4. Coordinates: slot tops in each column, columns centred vertically.
  const slot = id => isDummy.has(id) ? dummy : H;
  const columnHeight = ids => ids.reduce((s, id) => s + slot(id), 0) + Math.max(0, ids.length - 1) * gapY;
  const tallest = Math.max(H, ...order.map(columnHeight));
  const at = {};
  order.forEach((ids, l) => {
    let y = pad + (tallest - columnHeight(ids)) / 2;
    for (const id of ids) {
      at[id] = {x: pad + l * (W + gapX), y};
      y += slot(id) + gapY;
    }
  });

  // Ports: a node's edges leave (and arrive) spread over its side, in the
  // order of where they go (come from), so they do not cross at the node.
  const centre = id => at[id].y + slot(id) / 2;
  const ports = (id, others) => {
    const sorted = others.map((o, i) => [centre(o), i]).sort((a, b) => a[0] - b[0]);
    const y = [];
    sorted.forEach(([, i], k) => { y[i] = at[id].y + H * (k + 1) / (others.length + 1); });
    return y;
  };
  const outs = {}, ins = {};
  chains.forEach((c, i) => {
    (outs[c[0]] = outs[c[0]] || []).push(i);
    (ins[c[c.length - 1]] = ins[c[c.length - 1]] || []).push(i);
  });
  const outY = {}, inY = {};
  for (const [id, list] of Object.entries(outs)) {
    const y = ports(id, list.map(i => chains[i][1]));
    list.forEach((i, k) => { outY[i] = y[k]; });
  }
  for (const [id, list] of Object.entries(ins)) {
    const y = ports(id, list.map(i => chains[i][chains[i].length - 2]));
    list.forEach((i, k) => { inY[i] = y[k]; });
  }

  const routes = chains.map((c, i) => {
    const from = c[0], to = c[c.length - 1];
    const points = [[at[from].x + W, outY[i]]];
    for (const d of c.slice(1, -1)) {
      points.push([at[d].x, centre(d)], [at[d].x + W, centre(d)]);
    }
    points.push([at[to].x, inY[i]]);
    return points;
  });
  const real = Object.fromEntries(ids.map(id => [id, at[id]]));
  return {
    nodes: real,
    edges: routes,
    width: pad * 2 + order.length * (W + gapX) - gapX,
    height: pad * 2 + tallest,
    layers: Object.fromEntries(ids.map(id => [id, layer[id]])),
  };
}
