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
// job running, and no Workers panel (embedded mode).
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
	// Outside cluster mode: no Workers panel, no worker column.
	hidden := run(t, ctx, chromedp.Evaluate[[]bool](`["workers-panel", "jobs-worker-head"].map(id => document.getElementById(id).hidden)`))
	if !slices.Equal(hidden, []bool{true, true}) {
		t.Errorf("in embedded mode the Workers panel and the worker column are hidden %v, want both", hidden)
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
