package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"wasmstream.io/platform/internal/wasmbuild"
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
