package main

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"

	"wasmstream.io/platform/internal/wasmbuild"
)

// TestWebUIQuarantine: the job's page lists the key a keyed map parked,
// and its Release button replays the kept records (still rejected: one is
// dead-lettered, the others parked again).
func TestWebUIQuarantine(t *testing.T) {
	ts := startTestServer(t)
	ctx := browser(t)
	kinds := ts.upload(wasmbuild.UDF(t, "kinds"))
	faulty := ts.upload(wasmbuild.UDF(t, "faulty-wat"))
	ts.stream("UQIN", []string{"uqin"}, [][]byte{[]byte("a"), []byte("poison"), []byte("poison"), []byte("poison"), []byte("poison")})
	ts.stream("UQDLQ", []string{"uqdlq"}, nil)
	id := ts.submit(fmt.Sprintf(`name: parked
on_udf_error: {policy: quarantine, after: 2}
dead_letter_subject: uqdlq
sources: [{id: in, jetstream: {stream: UQIN}}]
operators: [{id: m, input: in, key_by: {module: %s, function: by_value}, map: {module: %s, function: reject}}]
sinks: [{id: out, input: m, discard: true}]
`, kinds, faulty))
	if err := chromedp.Do(ctx, chromedp.Navigate(ts.base+"/#/jobs/"+id)); err != nil {
		t.Fatal(err)
	}
	rowText := `[...document.querySelectorAll("#quarantine tr")].map(tr => [...tr.cells].slice(0, 7).map(c => c.textContent).join(" ")).join("\n")`
	waitPage[bool](t, ctx, rowText+` === "m 0 poison 2 3 3 0"`)
	if hidden := run(t, ctx, chromedp.Evaluate[bool](`document.getElementById("no-quarantine").hidden`)); !hidden {
		t.Error("the page says no key is quarantined beside the list")
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#quarantine tr[data-key="poison"] button`))); err != nil {
		t.Fatal(err)
	}
	waitPage[bool](t, ctx, `document.getElementById("quarantine-result").textContent === "key poison released: 3 records replayed"`)
	waitPage[bool](t, ctx, rowText+` === "m 0 poison 2 2 2 0"`)
}
