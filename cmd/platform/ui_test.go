package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"wasmstream.io/platform/checkpoint"
	"wasmstream.io/platform/internal/wasmbuild"
	"wasmstream.io/platform/runtime"
)

// chromiumPath is Debian's chromium, which .ci/run installs.
const chromiumPath = "/usr/bin/chromium"

// browser starts a headless chromium with a fresh profile and returns a
// context for driving it, ended with the test.
func browser(t *testing.T) context.Context {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Skipf("the web UI test needs chromium (apt-get install chromium): %v", err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancelBrowser := chromedp.NewContext(alloc)
	t.Cleanup(cancelBrowser)
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// TestWebUI drives the page in chromium against a whole platform: it uploads
// a module, submits a job whose sink is throttled, and waits for the job's
// graph to mark that sink as the bottleneck; then the jobs list shows the
// job running.
func TestWebUI(t *testing.T) {
	ts := startTestServer(t)
	ctx := browser(t)
	wasm := filepath.Join(t.TempDir(), "upper-wat.wasm")
	if err := os.WriteFile(wasm, wasmbuild.UDF(t, "upper-wat"), 0o644); err != nil {
		t.Fatal(err)
	}
	const spec = `name: slow-sink
sources: [{id: gen, generator: {kind: sequence}}]
sinks: [{id: slow, input: gen, parallelism: 2, discard: true, throttle: 2000}]
`
	err := chromedp.Do(ctx,
		chromedp.Navigate(ts.base+"/"),
		chromedp.WaitVisible(chromedp.CSS(`#no-jobs`)),
		chromedp.SetUploadFiles(chromedp.CSS(`#wasm`), []string{wasm}),
		chromedp.WaitVisible(chromedp.CSS(`#modules tr`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	uploaded := run(t, ctx, chromedp.Poll[string](`document.getElementById("upload-result").textContent.startsWith("uploaded ") &&
		document.getElementById("upload-result").textContent`))
	// A module is shown by its name when the API gives one, else by its id.
	var modules struct {
		Modules []struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"modules"`
	}
	ts.getJSON("/v1/modules", &modules)
	var wantModules []string
	for _, m := range modules.Modules {
		wantModules = append(wantModules, m.ID+" "+cmp.Or(m.Name, m.ID))
	}
	shown := run(t, ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#modules tr")].map(tr => tr.dataset.id + " " + tr.cells[0].textContent)`))
	if !slices.Equal(shown, wantModules) || len(shown) != 1 {
		t.Errorf("modules shown as %q, want %q", shown, wantModules)
	}
	err = chromedp.Do(ctx,
		chromedp.SetValue(chromedp.CSS(`#spec`), spec),
		chromedp.Click(chromedp.CSS(`#submit-form button`)),
		chromedp.WaitVisible(chromedp.CSS(`#graph g.vertex.bottleneck[data-id="slow"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	vertices := run(t, ctx, chromedp.Evaluate[[]string](
		`[...document.querySelectorAll("#graph g.vertex")].map(g => g.dataset.id + (g.classList.contains("bottleneck") ? " bottleneck" : ""))`))
	edges := run(t, ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#graph text.ship")].map(t => t.textContent)`))
	genLevel := run(t, ctx, chromedp.AttributeValue(chromedp.CSS(`#graph g.vertex[data-id="gen"]`), "data-level")).Value
	reason := run(t, ctx, chromedp.Text(chromedp.CSS(`#bottleneck`)))
	jobURL := run(t, ctx, chromedp.Location())
	if !strings.HasPrefix(uploaded, "uploaded sha256:") {
		t.Errorf("upload said %q", uploaded)
	}
	if want := []string{"gen", "slow bottleneck"}; !slices.Equal(vertices, want) {
		t.Errorf("graph vertices %q, want %q", vertices, want)
	}
	if want := []string{"rebalance"}; !slices.Equal(edges, want) {
		t.Errorf("graph edges %q, want %q", edges, want)
	}
	if genLevel != "HIGH" {
		t.Errorf("the source is drawn %q, want HIGH", genLevel)
	}
	if !strings.HasPrefix(reason, "Bottleneck: vertex slow (task slow, subtasks 0, 1). task gen is backpressured (HIGH") {
		t.Errorf("bottleneck text %q", reason)
	}
	_, id, ok := strings.Cut(jobURL, "#/jobs/")
	if !ok {
		t.Fatalf("submitting went to %s, not a job's page", jobURL)
	}

	row := chromedp.CSS(`#jobs tr[data-id="` + id + `"]`)
	if err := chromedp.Do(ctx, chromedp.Navigate(ts.base+"/#/"), chromedp.WaitVisible(row)); err != nil {
		t.Fatal(err)
	}
	state := run(t, ctx, chromedp.AttributeValue(row, "data-state")).Value
	if state != "RUNNING" {
		t.Errorf("the jobs list shows the job %s, want RUNNING", state)
	}
}

// run runs one action that has a result.
func run[T any](t *testing.T, ctx context.Context, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// getJSON GETs an API path that must answer 200 and decodes its body into v.
func (ts *testServer) getJSON(path string, v any) {
	ts.t.Helper()
	status, body := ts.call(http.MethodGet, path, "", nil)
	if status != http.StatusOK {
		ts.t.Fatalf("GET %s: %d %s", path, status, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		ts.t.Fatalf("GET %s: %v", path, err)
	}
}

// hasRoute says whether the server's OpenAPI document lists method on path.
func (ts *testServer) hasRoute(method, path string) bool {
	var doc struct {
		Paths map[string]map[string]any `json:"paths"`
	}
	ts.getJSON("/v1/openapi.json", &doc)
	_, ok := doc.Paths[path][strings.ToLower(method)]
	return ok
}

// waitPage polls a JavaScript expression in the page until it is truthy and
// returns its value.
func waitPage[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Poll[T](expr, chromedp.WithPollingTimeout(time.Minute)))
	if err != nil {
		shown, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.hash + ": " + document.getElementById("error").textContent`))
		t.Fatalf("waiting for %s: %v (page %s)", expr, err, shown)
	}
	return v
}

// pageJobID is the job whose page the browser shows.
func pageJobID(t *testing.T, ctx context.Context) string {
	t.Helper()
	_, id, ok := strings.Cut(run(t, ctx, chromedp.Location()), "#/jobs/")
	if !ok {
		t.Fatal("the browser is not on a job's page")
	}
	return id
}

// TestWebUIJobActions drives a checkpointed job through the page's buttons:
// a savepoint, a stop with a savepoint, a resume from that savepoint (a new
// job with the spec the page shows), a cancel, and a delete where the server
// has DELETE /v1/jobs/{id}. On the way it checks the spec view and the
// checkpoint summary against the API.
func TestWebUIJobActions(t *testing.T) {
	ts := startTestServer(t)
	ctx := browser(t)
	const spec = `name: checkpointed
checkpoint: {interval: 200ms}
sources:
  - id: gen
    parallelism: 2
    generator: {kind: sequence, rate: 2000}
sinks: [{id: out, input: gen, parallelism: 2, discard: true}]
`
	err := chromedp.Do(ctx,
		chromedp.Navigate(ts.base+"/"),
		chromedp.WaitVisible(chromedp.CSS(`#no-jobs`)),
		chromedp.SetValue(chromedp.CSS(`#spec`), spec),
		chromedp.Click(chromedp.CSS(`#submit-form button`)),
		chromedp.WaitVisible(chromedp.CSS(`#savepoint`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	id := pageJobID(t, ctx)

	// The spec view: the submitted bytes, from the API or kept by the page.
	wantSource := "As this page submitted it"
	if status, body := ts.call(http.MethodGet, "/v1/jobs/"+id+"/spec", "", nil); status == http.StatusOK {
		wantSource = "As submitted (GET"
		if string(body) != spec {
			t.Errorf("GET /v1/jobs/%s/spec is %q, want the submitted %q", id, body, spec)
		}
	}
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`#job-spec`))); err != nil {
		t.Fatal(err)
	}
	if got := run(t, ctx, chromedp.TextContent(chromedp.CSS(`#job-spec`))); got != spec {
		t.Errorf("the spec view shows %q, want %q", got, spec)
	}
	if got := run(t, ctx, chromedp.Text(chromedp.CSS(`#spec-source`))); !strings.HasPrefix(got, wantSource) {
		t.Errorf("the spec view says %q, want %q...", got, wantSource)
	}

	// Savepoint: the button triggers one the API lists, and it completes.
	// (First a few checkpoints, for the summary.)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		var job runtime.JobInfo
		ts.getJSON("/v1/jobs/"+id, &job)
		if job.Checkpoint != nil && job.Checkpoint.Completed >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s: %+v, not 3 checkpoints in a minute", job.State, job.Checkpoint)
		}
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#savepoint`))); err != nil {
		t.Fatal(err)
	}
	said := waitPage[string](t, ctx, `document.getElementById("action-result").textContent.match(/^savepoint (\S+) triggered$/)?.[1]`)
	sp := waitSavepoint(t, ts, id, said)
	if sp.Stop {
		t.Errorf("savepoint %s stops the job", said)
	}

	// Stop with a savepoint: the job ends FINISHED with a stopping savepoint.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#stop`))); err != nil {
		t.Fatal(err)
	}
	stopID := waitPage[string](t, ctx, `document.getElementById("action-result").textContent.match(/^stopping with savepoint (\S+)$/)?.[1]`)
	if info := ts.wait(id); info.State != runtime.StateFinished {
		t.Fatalf("after stop the job is %s (%s), want FINISHED", info.State, info.Failure)
	}
	if sp := waitSavepoint(t, ts, id, stopID); !sp.Stop {
		t.Errorf("savepoint %s of the stop does not stop the job", stopID)
	}
	waitPage[bool](t, ctx, `document.getElementById("job-state").textContent === "FINISHED"`)
	wantButtons := []string{"resume"}
	canDelete := ts.hasRoute("DELETE", "/v1/jobs/{id}")
	if canDelete {
		wantButtons = append(wantButtons, "delete")
	}
	waitPage[bool](t, ctx, `!document.getElementById("resume").hidden`)
	buttons := run(t, ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll(".actions button")].filter(b => !b.hidden).map(b => b.id)`))
	if !slices.Equal(buttons, wantButtons) {
		t.Errorf("a FINISHED job's buttons are %q, want %q", buttons, wantButtons)
	}

	checkSummary(t, ctx, ts, id)

	// Resume: a new job from the stop's savepoint, with the same spec.
	resumeFrom := run(t, ctx, chromedp.AttributeValue(chromedp.CSS(`#resume`), "data-savepoint")).Value
	if resumeFrom != stopID {
		t.Errorf("resume offers savepoint %q, want the stop's %q", resumeFrom, stopID)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#resume`))); err != nil {
		t.Fatal(err)
	}
	resumed := waitPage[string](t, ctx, `!location.hash.endsWith("/`+id+`") && location.hash.startsWith("#/jobs/") && location.hash.slice(7)`)
	var job runtime.JobInfo
	ts.getJSON("/v1/jobs/"+resumed, &job)
	if job.Name != "checkpointed" || job.Checkpoint == nil || job.Checkpoint.Restored == nil {
		t.Fatalf("resumed job %+v, want one restored from a savepoint", job)
	}
	if r := job.Checkpoint.Restored; r.Kind != "savepoint" || fmt.Sprintf("%s-%d", r.Job, r.Checkpoint) != stopID {
		t.Errorf("the resumed job restored %s %d of job %s, want savepoint %s", r.Kind, r.Checkpoint, r.Job, stopID)
	}
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`#job-spec`))); err != nil {
		t.Fatal(err)
	}
	if got := run(t, ctx, chromedp.TextContent(chromedp.CSS(`#job-spec`))); got != spec {
		t.Errorf("the resumed job's spec view shows %q, want %q", got, spec)
	}

	// Cancel, then delete the ended job (or no delete button without the
	// route).
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#cancel`))); err != nil {
		t.Fatal(err)
	}
	if info := ts.wait(resumed); info.State != runtime.StateCanceled {
		t.Fatalf("after cancel the job is %s, want CANCELED", info.State)
	}
	waitPage[bool](t, ctx, `document.getElementById("job-state").textContent === "CANCELED" && document.getElementById("cancel").hidden`)
	if !canDelete {
		if !run(t, ctx, chromedp.Evaluate[bool](`document.getElementById("delete").hidden`)) {
			t.Error("a delete button without DELETE /v1/jobs/{id}")
		}
		return
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#delete`))); err != nil {
		t.Fatal(err)
	}
	waitPage[bool](t, ctx, `location.hash === "#/"`)
	if status, body := ts.call(http.MethodGet, "/v1/jobs/"+resumed, "", nil); status != http.StatusNotFound {
		t.Errorf("after delete GET /v1/jobs/%s answers %d %s, want 404", resumed, status, body)
	}
}

// waitSavepoint waits until the API lists the job's savepoint id COMPLETED.
func waitSavepoint(t *testing.T, ts *testServer, job, id string) runtime.SavepointInfo {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		var list struct {
			Savepoints []runtime.SavepointInfo `json:"savepoints"`
		}
		ts.getJSON("/v1/jobs/"+job+"/savepoints", &list)
		i := slices.IndexFunc(list.Savepoints, func(s runtime.SavepointInfo) bool { return s.ID == id })
		if i >= 0 && list.Savepoints[i].Status == checkpoint.StatusCompleted {
			return list.Savepoints[i]
		}
		if time.Now().After(deadline) {
			t.Fatalf("savepoint %s of job %s: not COMPLETED in %+v", id, job, list.Savepoints)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// checkSummary compares the page's checkpoint summary, exact figures, with
// the minimum, average and maximum of the API's completed checkpoints.
func checkSummary(t *testing.T, ctx context.Context, ts *testServer, id string) {
	t.Helper()
	var want map[string]string
	var got map[string]string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		var history struct {
			Checkpoints []checkpoint.Stats `json:"checkpoints"`
		}
		ts.getJSON("/v1/jobs/"+id+"/checkpoints", &history)
		var done []checkpoint.Stats
		for _, c := range history.Checkpoints {
			if c.Status == checkpoint.StatusCompleted {
				done = append(done, c)
			}
		}
		want = map[string]string{"count": strconv.Itoa(len(done))}
		for field, value := range map[string]func(checkpoint.Stats) int64{
			"duration_ns":     func(c checkpoint.Stats) int64 { return int64(c.Duration) },
			"size":            func(c checkpoint.Stats) int64 { return c.Size },
			"alignment_ns":    func(c checkpoint.Stats) int64 { return int64(c.Alignment) },
			"in_flight_bytes": func(c checkpoint.Stats) int64 { return c.InFlight },
		} {
			lo, hi, sum := int64(math.MaxInt64), int64(math.MinInt64), 0.0
			for _, c := range done {
				lo, hi, sum = min(lo, value(c)), max(hi, value(c)), sum+float64(value(c))
			}
			want[field+" min"] = strconv.FormatInt(lo, 10)
			want[field+" max"] = strconv.FormatInt(hi, 10)
			want[field+" avg"] = strconv.FormatFloat(sum/float64(len(done)), 'g', -1, 64)
		}
		got = run(t, ctx, chromedp.Evaluate[map[string]string](`(() => {
			const out = {count: document.getElementById("summary-count")?.dataset.count};
			for (const s of document.querySelectorAll("#summary-table span[data-stat]")) {
				out[s.closest("tr").dataset.field + " " + s.dataset.stat] = s.dataset.value;
			}
			return out;
		})()`))
		// JavaScript writes a whole float64 without a fraction, as Go's 'g'
		// does not for large ones; compare the numbers.
		for k, v := range got {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				got[k] = strconv.FormatFloat(f, 'g', -1, 64)
			}
		}
		for k, v := range want {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				want[k] = strconv.FormatFloat(f, 'g', -1, 64)
			}
		}
		if len(done) >= 3 && maps.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the checkpoint summary shows %v, want %v", got, want)
		}
	}
}

// TestWebUIWatermarks checks the page's watermarks, the vertices' and the
// subtasks' (a subtask's where the API gives one), against the API's, for a
// job whose watermarks stand still: its source has read all there is.
func TestWebUIWatermarks(t *testing.T) {
	ts := startTestServer(t)
	ctx := browser(t)
	ts.stream("MARKS", []string{"marks"}, [][]byte{[]byte("1"), []byte("2"), []byte("3")})
	id := ts.submit(`name: marks
sources:
  - id: in
    jetstream: {stream: MARKS}
    watermark: {strategy: bounded_out_of_orderness, max_out_of_orderness: 1s}
sinks: [{id: out, input: in, parallelism: 2, discard: true}]
`)
	if err := chromedp.Do(ctx, chromedp.Navigate(ts.base+"/#/jobs/"+id)); err != nil {
		t.Fatal(err)
	}
	iso := func(ms *int64) string {
		if ms == nil {
			return "–"
		}
		return time.UnixMilli(*ms).UTC().Format("2006-01-02T15:04:05.000Z")
	}
	var want, got []string
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(500 * time.Millisecond) {
		var job runtime.JobInfo
		ts.getJSON("/v1/jobs/"+id, &job)
		var bp struct {
			Vertices []struct {
				ID       string `json:"id"`
				Subtasks []struct {
					Subtask   int    `json:"subtask"`
					Watermark *int64 `json:"watermark"`
				} `json:"subtasks"`
			} `json:"vertices"`
		}
		ts.getJSON("/v1/jobs/"+id+"/backpressure", &bp)
		want = nil
		complete := true
		for _, v := range job.Vertices {
			complete = complete && v.Watermark != nil
			want = append(want, v.ID+" "+iso(v.Watermark))
		}
		for _, v := range bp.Vertices {
			complete = complete && len(v.Subtasks) > 0
			for _, s := range v.Subtasks {
				want = append(want, fmt.Sprintf("%s[%d] %s", v.ID, s.Subtask, iso(s.Watermark)))
			}
		}
		got = run(t, ctx, chromedp.Evaluate[[]string](`[
			...[...document.querySelectorAll("#vertices tr")].map(tr => tr.dataset.id + " " + tr.cells[10].textContent),
			...[...document.querySelectorAll("#subtasks tr")].map(tr => tr.dataset.vertex + "[" + tr.dataset.subtask + "] " + tr.cells[9].textContent),
		]`))
		if complete && len(want) == 5 && slices.Equal(got, want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("watermarks shown %q, want %q", got, want)
		}
	}
	tip := run(t, ctx, chromedp.AttributeValue(chromedp.CSS(`#subtask-watermark-head`), "title")).Value
	if strings.HasSuffix(got[2], " –") && !strings.Contains(tip, "no watermark per subtask") {
		t.Errorf("without subtask watermarks the column's tooltip says %q", tip)
	}
}

// TestWebUIExceptions fails a job twice over with restarts and checks the
// page's exceptions history: the failures it saw, newest first, each naming
// the failing vertex, which the graph marks.
func TestWebUIExceptions(t *testing.T) {
	ts := startTestServer(t)
	ctx := browser(t)
	faulty := ts.upload(wasmbuild.UDF(t, "faulty-wat"))
	ts.stream("POISON", []string{"poison"}, [][]byte{[]byte("fine"), []byte("poison")})
	id := ts.submit(fmt.Sprintf(`name: poisoned
restart: {strategy: fixed_delay, max_attempts: 2, delay: 2s}
sources: [{id: in, jetstream: {stream: POISON}}]
operators: [{id: m, input: in, map: {module: %s, function: poison}}]
sinks: [{id: out, input: m, discard: true}]
`, faulty))
	if err := chromedp.Do(ctx, chromedp.Navigate(ts.base+"/#/jobs/"+id)); err != nil {
		t.Fatal(err)
	}
	info := ts.wait(id)
	if info.State != runtime.StateFailed || info.Restarts != 2 {
		t.Fatalf("job %s after %d restarts, want FAILED after 2", info.State, info.Restarts)
	}
	waitPage[bool](t, ctx, `document.getElementById("job-state").textContent === "FAILED"`)
	type entry struct {
		Time, Restarts, Vertex, Failure string
	}
	entries := run(t, ctx, chromedp.Evaluate[[]entry](`[...document.querySelectorAll("#exceptions tr")].map(tr => ({
		Time: tr.cells[0].textContent, Restarts: tr.cells[1].textContent, Vertex: tr.cells[2].textContent, Failure: tr.cells[3].textContent}))`))
	if len(entries) < 2 {
		t.Fatalf("exceptions %+v, want the failures before the restarts and the last one", entries)
	}
	if want := (entry{info.Ended.Format(time.RFC3339Nano), "2", "m", info.Failure}); entries[0] != want {
		t.Errorf("newest exception %+v, want %+v", entries[0], want)
	}
	for i, e := range entries {
		if e.Vertex != "m" || !strings.HasPrefix(e.Failure, "task in: operator[m]: ") {
			t.Errorf("exception %d: %+v, want one of vertex m", i, e)
		}
		if i > 0 && e.Restarts > entries[i-1].Restarts {
			t.Errorf("exceptions not newest first: %+v", entries)
		}
	}
	tip := run(t, ctx, chromedp.AttributeValue(chromedp.CSS(`#exceptions-table`), "title")).Value
	if !strings.Contains(tip, "only a job's last failure") || !strings.Contains(tip, "while it is open") {
		t.Errorf("the history's tooltip says %q", tip)
	}
	failed := run(t, ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#graph g.vertex.failed, #vertices tr.failed")].map(e => e.tagName + " " + e.dataset.id)`))
	if want := []string{"g m", "TR m"}; !slices.Equal(failed, want) {
		t.Errorf("marked failed: %q, want %q", failed, want)
	}
}

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

// TestWebUIOptionalRoutes checks how the page does with and without GET
// /v1/jobs/{id}/spec and DELETE /v1/jobs/{id}: without them no spec (for a
// job it did not submit) and no delete button; with them in the OpenAPI
// document (stubbed in the page where the server lacks them) the spec from
// the API, and a delete button that sends DELETE, goes back to the jobs on
// 204, and hides itself on 405.
func TestWebUIOptionalRoutes(t *testing.T) {
	ts := startTestServer(t)
	ctx := browser(t)
	id := ts.submit("name: short\nsources: [{id: gen, generator: {kind: sequence, count: 10}}]\nsinks: [{id: out, input: gen, discard: true}]\n")
	if info := ts.wait(id); info.State != runtime.StateFinished {
		t.Fatalf("job %s: %s", info.State, info.Failure)
	}
	if ts.hasRoute("GET", "/v1/jobs/{id}/spec") || ts.hasRoute("DELETE", "/v1/jobs/{id}") {
		t.Skip("the server has the routes; TestWebUIJobActions uses them")
	}
	jobPage := ts.base + "/#/jobs/" + id
	if err := chromedp.Do(ctx, chromedp.Navigate(jobPage)); err != nil {
		t.Fatal(err)
	}
	waitPage[bool](t, ctx, `document.getElementById("job-state").textContent === "FINISHED" && document.getElementById("spec-source").textContent !== ""`)
	hidden := run(t, ctx, chromedp.Evaluate[[]bool](`["delete", "resume", "job-spec"].map(id => document.getElementById(id).hidden)`))
	source := run(t, ctx, chromedp.Text(chromedp.CSS(`#spec-source`)))
	if !slices.Equal(hidden, []bool{true, true, true}) || !strings.HasPrefix(source, "The server does not give this job's spec") {
		t.Errorf("without the routes: delete, resume and spec hidden %v, spec source %q", hidden, source)
	}
	// The watermark of an ended input is the largest int64, past what a
	// Date holds.
	var job runtime.JobInfo
	ts.getJSON("/v1/jobs/"+id, &job)
	var want []string
	for _, v := range job.Vertices {
		if v.Watermark == nil || *v.Watermark != math.MaxInt64 {
			t.Fatalf("vertex %s of the ended job has the watermark %v", v.ID, v.Watermark)
		}
		want = append(want, v.ID+" end of input")
	}
	got := run(t, ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#vertices tr")].map(tr => tr.dataset.id + " " + tr.cells[10].textContent)`))
	if !slices.Equal(got, want) {
		t.Errorf("watermarks %q, want %q", got, want)
	}

	err := chromedp.Do(ctx,
		chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			_, err := cdp.Call(ctx, t, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: stubRoutes})
			return err
		}),
		chromedp.Navigate("about:blank"),
		chromedp.Navigate(jobPage),
		chromedp.WaitVisible(chromedp.CSS(`#job-spec`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	if got := run(t, ctx, chromedp.TextContent(chromedp.CSS(`#job-spec`))); got != "name: stubbed\n" {
		t.Errorf("the spec view shows %q, want the API's", got)
	}
	if got := run(t, ctx, chromedp.Text(chromedp.CSS(`#spec-source`))); !strings.HasPrefix(got, "As submitted (GET") {
		t.Errorf("the spec view says %q", got)
	}
	// The server answers the DELETE 405: the button goes.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#delete`))); err != nil {
		t.Fatal(err)
	}
	waitPage[bool](t, ctx, `document.getElementById("action-result").textContent === "this server cannot delete jobs"`)
	if !run(t, ctx, chromedp.Evaluate[bool](`document.getElementById("delete").hidden`)) {
		t.Error("the delete button stays after a 405")
	}
	// A 204: the page goes back to the jobs.
	err = chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`sessionStorage.setItem("stub-delete", "204")`),
		chromedp.Reload(),
		chromedp.Click(chromedp.CSS(`#delete`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	waitPage[bool](t, ctx, `location.hash === "#/"`)
	calls := run(t, ctx, chromedp.Evaluate[[]string](`window.calls.filter(c => c.startsWith("DELETE "))`))
	if want := []string{"DELETE /v1/jobs/" + id}; !slices.Equal(calls, want) {
		t.Errorf("requests %q, want %q", calls, want)
	}
}
