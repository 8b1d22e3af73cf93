package main

import (
	"fmt"
	"math"
	"testing"

	"github.com/chromedp/chromedp"

	"wasmstream.io/platform/internal/wasmbuild"
	"wasmstream.io/platform/runtime"
)

// TestWebUIGraphLayout draws a fan-out graph with a long edge (gen -> a, b,
// c; a and b joined; joined and gen joined again, two layers on) and checks
// from the SVG that the vertices are in their longest-path layers, that each
// edge runs from its source's right side to its target's left side, and
// that no edge passes through a vertex's box.
func TestWebUIGraphLayout(t *testing.T) {
	ts := startTestServer(t)
	ctx := browser(t)
	faulty := ts.upload(wasmbuild.UDF(t, "faulty-wat"))
	id := ts.submit(fmt.Sprintf(`name: fan
sources: [{id: gen, generator: {kind: clicks, rate: 100}}]
operators:
  - {id: a, input: gen, map: {module: %[1]s, function: reject}}
  - {id: b, input: gen, map: {module: %[1]s, function: reject}}
  - {id: c, input: gen, map: {module: %[1]s, function: reject}}
  - id: joined
    join: {left: {input: a, key_by: {field: user}}, right: {input: b, key_by: {field: user}}, window: {type: tumbling, size: 1s}}
  - id: again
    join: {left: {input: gen, key_by: {field: user}}, right: {input: joined, key_by: {field: key}}, window: {type: tumbling, size: 1s}}
sinks:
  - {id: outc, input: c, discard: true}
  - {id: out, input: again, discard: true}
`, faulty))
	if err := chromedp.Do(ctx, chromedp.Navigate(ts.base+"/#/jobs/"+id),
		chromedp.WaitVisible(chromedp.CSS(`#graph g.vertex[data-id="out"]`))); err != nil {
		t.Fatal(err)
	}
	var job runtime.JobInfo
	ts.getJSON("/v1/jobs/"+id, &job)
	drawn := run(t, ctx, chromedp.Evaluate[graphDrawing](`({
		Boxes: [...document.querySelectorAll("#graph g.vertex")].map(g => {
			const r = g.querySelector("rect").getBBox();
			return {ID: g.dataset.id, Layer: Number(g.dataset.layer), X: r.x, Y: r.y, W: r.width, H: r.height};
		}),
		Edges: [...document.querySelectorAll("#graph polyline.edge")].map(l => ({
			From: l.dataset.from, To: l.dataset.to, Points: [...l.points].map(p => [p.x, p.y])})),
	})`))

	// Layers: the longest path from a source.
	layer := map[string]int{}
	for range job.Vertices {
		for _, e := range job.Edges {
			layer[e.To] = max(layer[e.To], layer[e.From]+1)
		}
	}
	box := map[string]graphBox{}
	for _, b := range drawn.Boxes {
		box[b.ID] = b
		if b.Layer != layer[b.ID] {
			t.Errorf("vertex %s in layer %d, want %d", b.ID, b.Layer, layer[b.ID])
		}
	}
	if len(box) != len(job.Vertices) || len(drawn.Edges) != len(job.Edges) {
		t.Fatalf("drew %d vertices and %d edges, want %d and %d", len(box), len(drawn.Edges), len(job.Vertices), len(job.Edges))
	}
	long := false
	for i, e := range drawn.Edges {
		if want := job.Edges[i]; e.From != want.From || e.To != want.To {
			t.Errorf("edge %d drawn %s -> %s, want %s -> %s", i, e.From, e.To, want.From, want.To)
		}
		from, to := box[e.From], box[e.To]
		start, end := e.Points[0], e.Points[len(e.Points)-1]
		if math.Abs(start[0]-(from.X+from.W)) > 0.01 || start[1] < from.Y || start[1] > from.Y+from.H {
			t.Errorf("edge %s -> %s starts at %v, not on the right side of %+v", e.From, e.To, start, from)
		}
		if math.Abs(end[0]-to.X) > 0.01 || end[1] < to.Y || end[1] > to.Y+to.H {
			t.Errorf("edge %s -> %s ends at %v, not on the left side of %+v", e.From, e.To, end, to)
		}
		long = long || layer[e.To]-layer[e.From] > 1
		for k := 1; k < len(e.Points); k++ {
			for _, b := range drawn.Boxes {
				if segmentCrossesBox(e.Points[k-1], e.Points[k], b) {
					t.Errorf("edge %s -> %s: segment %v-%v crosses vertex %s %+v", e.From, e.To, e.Points[k-1], e.Points[k], b.ID, b)
				}
			}
		}
	}
	if !long {
		t.Error("the graph has no edge over more than one layer")
	}
}

// graphDrawing is the page's SVG graph: the vertices' boxes and the edges'
// polylines.
type graphDrawing struct {
	Boxes []graphBox
	Edges []struct {
		From, To string
		Points   [][2]float64
	}
}

// graphBox is a vertex's box in the page's SVG.
type graphBox struct {
	ID         string
	Layer      int
	X, Y, W, H float64
}

// segmentCrossesBox says whether the segment p-q enters the inside of b
// (b less half a pixel on every side, so that an edge may touch the box it
// starts or ends at), by clipping the segment to the box (Liang-Barsky).
func segmentCrossesBox(p, q [2]float64, b graphBox) bool {
	const inset = 0.5
	x0, y0, x1, y1 := b.X+inset, b.Y+inset, b.X+b.W-inset, b.Y+b.H-inset
	dx, dy := q[0]-p[0], q[1]-p[1]
	lo, hi := 0.0, 1.0
	for _, c := range [][2]float64{{-dx, p[0] - x0}, {dx, x1 - p[0]}, {-dy, p[1] - y0}, {dy, y1 - p[1]}} {
		if c[0] == 0 {
			if c[1] < 0 {
				return false
			}
			continue
		}
		t := c[1] / c[0]
		if c[0] < 0 {
			lo = max(lo, t)
		} else {
			hi = min(hi, t)
		}
	}
	return lo < hi
}

// TestUIGeometry checks segmentCrossesBox, which the layout test relies on.
func TestUIGeometry(t *testing.T) {
	b := graphBox{X: 10, Y: 10, W: 20, H: 10}
	for _, tt := range []struct {
		p, q [2]float64
		want bool
	}{
		{[2]float64{0, 15}, [2]float64{40, 15}, true},   // straight through
		{[2]float64{0, 0}, [2]float64{40, 30}, true},    // diagonally through
		{[2]float64{15, 15}, [2]float64{16, 16}, true},  // inside
		{[2]float64{0, 5}, [2]float64{40, 5}, false},    // above
		{[2]float64{30, 15}, [2]float64{50, 15}, false}, // from the right side outwards
		{[2]float64{0, 15}, [2]float64{10, 15}, false},  // up to the left side
		{[2]float64{0, 30}, [2]float64{5, 0}, false},    // beside
		{[2]float64{0, 12}, [2]float64{12, 0}, false},   // past a corner
	} {
		if got := segmentCrossesBox(tt.p, tt.q, b); got != tt.want {
			t.Errorf("segment %v-%v crosses %+v: %v, want %v", tt.p, tt.q, b, got, tt.want)
		}
	}
}

// stubRoutes makes the page see GET /v1/jobs/{id}/spec (answering
// "name: stubbed") and DELETE /v1/jobs/{id} in the OpenAPI document, for a
// server that has neither; a DELETE goes to the server, or answers 204 once
// sessionStorage's "stub-delete" is "204". window.calls lists the requests.
const stubRoutes = `(() => {
	const real = window.fetch.bind(window);
	window.calls = [];
	window.fetch = async (path, opts) => {
		const method = (opts && opts.method) || "GET";
		window.calls.push(method + " " + path);
		if (path === "/v1/openapi.json") {
			const doc = await (await real(path, opts)).json();
			doc.paths["/v1/jobs/{id}"].delete = {};
			doc.paths["/v1/jobs/{id}/spec"] = {get: {}};
			return new Response(JSON.stringify(doc), {status: 200});
		}
		if (method === "GET" && path.endsWith("/spec")) return new Response("name: stubbed\n", {status: 200});
		if (method === "DELETE" && sessionStorage.getItem("stub-delete") === "204") return new Response(null, {status: 204});
		return real(path, opts);
	};
})()`
