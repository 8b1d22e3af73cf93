package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"wasmstream.io/platform/internal/wasmbuild"
	"wasmstream.io/platform/runtime"
)

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
// job's exception history on its page: every failure, newest first, with
// the action and delay the restart strategy chose, each naming the failing
// subtask and vertex, which the graph marks.
func TestWebUIExceptions(t *testing.T) {
	ts := startTestServer(t)
	ctx := browser(t)
	faulty := ts.upload(wasmbuild.UDF(t, "faulty-wat"))
	ts.stream("POISON", []string{"poison"}, [][]byte{[]byte("fine"), []byte("poison")})
	id := ts.submit(fmt.Sprintf(`name: poisoned
restart: {strategy: fixed_delay, max_attempts: 2, delay: 50ms}
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
	waitPage[bool](t, ctx, `document.getElementById("job-state").textContent === "FAILED" && document.querySelectorAll("#exceptions tr").length === 3`)
	type entry struct {
		Time, Action, Attempt, Delay, Subtask, Vertex, Failure string
	}
	entries := run(t, ctx, chromedp.Evaluate[[]entry](`[...document.querySelectorAll("#exceptions tr")].map(tr => ({
		Time: tr.cells[0].textContent, Action: tr.cells[1].textContent, Attempt: tr.cells[2].textContent, Delay: tr.cells[3].textContent,
		Subtask: tr.cells[4].textContent, Vertex: tr.cells[5].textContent, Failure: tr.cells[6].textContent}))`))
	want := []struct{ action, attempt, delay string }{{"fail", "–", "–"}, {"restart", "2", "50 ms"}, {"restart", "1", "50 ms"}}
	if len(entries) != len(want) {
		t.Fatalf("exceptions %+v, want %d", entries, len(want))
	}
	for i, e := range entries {
		x := info.Exceptions[i]
		if e.Time != x.Time.Format(time.RFC3339Nano) || e.Action != want[i].action || e.Attempt != want[i].attempt || e.Delay != want[i].delay {
			t.Errorf("exception %d: %+v, want %s at %s, attempt %s, delay %s", i, e, want[i].action, x.Time.Format(time.RFC3339Nano), want[i].attempt, want[i].delay)
		}
		if e.Subtask != "in[0]" || e.Vertex != "m" || !strings.HasPrefix(e.Failure, "task in: operator[m]: ") {
			t.Errorf("exception %d: %+v, want one of subtask in[0], vertex m", i, e)
		}
	}
	if entries[0].Failure != info.Failure {
		t.Errorf("newest exception %q, want the job's failure %q", entries[0].Failure, info.Failure)
	}
	failed := run(t, ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#graph g.vertex.failed, #vertices tr.failed")].map(e => e.tagName + " " + e.dataset.id)`))
	if want := []string{"g m", "TR m"}; !slices.Equal(failed, want) {
		t.Errorf("marked failed: %q, want %q", failed, want)
	}
}
