package main

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"

	"wasmstream.io/platform/internal/wasmbuild"
)

// TestWebUICanary: the job's page shows the canary a job runs, with each
// version's figures of the vertex it changes, and hides it once the
// canary is rolled back.
func TestWebUICanary(t *testing.T) {
	ts := startTestServer(t)
	ctx := browser(t)
	v1 := ts.upload(wasmbuild.UDF(t, "dedup-c"))
	v2 := ts.upload(wasmbuild.UDF(t, "dedup-v2"))
	ts.stream("UCIN", []string{"ucin"}, nil)
	ts.stream("UCOUT", []string{"ucout"}, nil)
	id := ts.submit(fmt.Sprintf(`name: canary
max_parallelism: 4
checkpoint: {interval: 50ms}
sources: [{id: in, jetstream: {stream: UCIN}}]
operators: [{id: dedup, input: in, parallelism: 2, key_by: {field: user}, process: {module: "%s", function: dedup}}]
sinks: [{id: out, input: dedup, jetstream: {subject: ucout}}]
`, v1))
	ts.waitFor("the job running", func() bool { return ts.job(id).State == "RUNNING" })
	if status, body := ts.call(http.MethodPost, "/v1/jobs/"+id+"/upgrade", "application/json",
		fmt.Appendf(nil, `{"module":%q,"canary":{"key_groups":"2-3"},"probation":{"time":"100ms"}}`, v2)); status != http.StatusAccepted {
		t.Fatalf("canary: %d %s", status, body)
	}
	ts.waitFor("the canary running", func() bool {
		v := ts.job(id).Versions
		return len(v) == 2 && v[1].Outcome == "running"
	})
	if err := chromedp.Do(ctx, chromedp.Navigate(ts.base+"/#/jobs/"+id)); err != nil {
		t.Fatal(err)
	}
	rowText := `[...document.querySelectorAll("#canary-figures tr")].map(tr => [...tr.cells].slice(0, 6).map(c => c.textContent).join(" ")).join("\n")`
	waitPage[bool](t, ctx, `!document.getElementById("canary").hidden && `+rowText+` === "dedup stable 0 0 0 0\ndedup canary 1 0 0 0"`)
	waitPage[bool](t, ctx, `document.getElementById("canary-summary").textContent.startsWith("Key groups 2-3 run `+v2+`;")`)
	if status, body := ts.call(http.MethodPost, "/v1/jobs/"+id+"/rollback", "", nil); status != http.StatusAccepted {
		t.Fatalf("rollback: %d %s", status, body)
	}
	waitPage[bool](t, ctx, `document.getElementById("canary").hidden`)
}
