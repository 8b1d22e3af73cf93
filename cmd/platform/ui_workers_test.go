package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"wasmstream.io/platform/runtime"
)

// shownWorker is a worker as the page's Workers panel shows it.
type shownWorker struct {
	ID    string
	Alive string
	State string
	Dead  bool
	Slots string
	Jobs  []string
}

// shownCluster is what the overview page shows of a cluster: the Workers
// panel and the worker of each job in the jobs list.
type shownCluster struct {
	Panel      bool
	WorkerHead bool
	Workers    []shownWorker
	JobWorkers map[string]string
}

func (c shownCluster) worker(id string) shownWorker {
	i := slices.IndexFunc(c.Workers, func(w shownWorker) bool { return w.ID == id })
	if i < 0 {
		return shownWorker{}
	}
	return c.Workers[i]
}

// showCluster reads the Workers panel and the jobs list from the page.
const showCluster = `({
	Panel: !document.getElementById("workers-panel").hidden,
	WorkerHead: !document.getElementById("jobs-worker-head").hidden,
	Workers: [...document.querySelectorAll("#workers tr")].map(tr => ({
		ID: tr.dataset.id,
		Alive: tr.dataset.alive,
		State: tr.cells[2].textContent,
		Dead: tr.classList.contains("dead"),
		Slots: tr.cells[3].textContent,
		Jobs: [...tr.querySelectorAll("a[data-id]")].map(a => a.dataset.id),
	})),
	JobWorkers: Object.fromEntries([...document.querySelectorAll("#jobs tr")].map(tr => [tr.dataset.id, tr.dataset.worker])),
})`

// waitCluster polls the page until ok holds of what it shows, failing the
// test with what it shows at the deadline.
func waitCluster(t *testing.T, ctx context.Context, within time.Duration, what string, ok func(shownCluster) bool) shownCluster {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		c := run(t, ctx, chromedp.Evaluate[shownCluster](showCluster))
		if ok(c) {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s; the page shows %+v", what, within, c)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestWebUIWorkers runs a cluster of two worker processes on the NATS of a
// third, embedded-mode process, submits a job through w1, and checks w1's
// Workers panel: both workers alive, the job's worker with one of its three
// slots taken and the job listed under it (a link to the job's page, which
// names the worker), the jobs list naming the worker. Then it SIGKILLs the
// job's worker and watches the page of the other worker: the killed one
// shown dead, the job listed under the survivor.
func TestWebUIWorkers(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills platform processes")
	}
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Skipf("the web UI test needs chromium (apt-get install chromium): %v", err)
	}
	bin := buildPlatform(t)
	nats := &child{t: t, bin: bin, dir: t.TempDir(), http: fmt.Sprintf("127.0.0.1:%d", freePort(t)), natsPort: freePort(t)}
	t.Cleanup(nats.stop)
	nats.start()
	workers := map[string]*child{}
	for _, id := range []string{"w1", "w2"} {
		w := &child{t: t, bin: bin, dir: t.TempDir(), http: fmt.Sprintf("127.0.0.1:%d", freePort(t)), args: []string{
			"--nats.url", fmt.Sprintf("nats://127.0.0.1:%d", nats.natsPort),
			"--cluster.worker_id", id, "--cluster.slots", "3", "--cluster.worker_timeout", "1s"}}
		t.Cleanup(w.stop)
		w.start()
		workers[id] = w
	}
	const spec = `name: clicks
checkpoint: {interval: 500ms}
sources: [{id: clicks, generator: {kind: clicks, rate: 100, count: 100000000, keys: 50}}]
sinks: [{id: out, input: clicks, discard: true}]
`
	job := workers["w1"].submit(spec)
	var owner string
	for deadline := time.Now().Add(time.Minute); owner == ""; time.Sleep(100 * time.Millisecond) {
		info := workers["w1"].job(job)
		if info.State == runtime.StateRunning {
			owner = info.Worker
		}
		if info.State.Terminal() || time.Now().After(deadline) {
			t.Fatalf("job %s on worker %q: %s", info.State, info.Worker, info.Failure)
		}
	}
	other := map[string]string{"w1": "w2", "w2": "w1"}[owner]
	if other == "" {
		t.Fatalf("the job runs on worker %q, not w1 or w2", owner)
	}

	ctx := browser(t)
	if err := chromedp.Do(ctx, chromedp.Navigate("http://"+workers["w1"].http+"/#/"),
		chromedp.WaitVisible(chromedp.CSS(`#workers-panel`))); err != nil {
		t.Fatal(err)
	}
	// A worker reports the slots its jobs take at its heartbeats.
	waitCluster(t, ctx, 30*time.Second, "w1's page shows the job on "+owner, func(c shownCluster) bool {
		o, x := c.worker(owner), c.worker(other)
		return c.Panel && c.WorkerHead && len(c.Workers) == 2 &&
			o.Alive == "true" && o.State == "alive" && !o.Dead && o.Slots == "1/3" && slices.Equal(o.Jobs, []string{job}) &&
			x.Alive == "true" && x.State == "alive" && !x.Dead && x.Slots == "0/3" && len(x.Jobs) == 0 &&
			c.JobWorkers[job] == owner
	})
	// The job's link opens its page, which names its worker.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#workers tr[data-id="`+owner+`"] a[data-id="`+job+`"]`))); err != nil {
		t.Fatal(err)
	}
	if id := waitPage[string](t, ctx, `location.hash.startsWith("#/jobs/") && document.getElementById("job-id").textContent`); id != job {
		t.Errorf("the worker's job link opened job %s, want %s", id, job)
	}
	waitPage[bool](t, ctx, `document.getElementById("job-worker").textContent === "· on worker `+owner+`"`)

	// Failover, seen from the page of the worker that stays.
	if err := chromedp.Do(ctx, chromedp.Navigate("http://"+workers[other].http+"/#/"),
		chromedp.WaitVisible(chromedp.CSS(`#workers tr[data-id="`+owner+`"] a[data-id="`+job+`"]`))); err != nil {
		t.Fatal(err)
	}
	workers[owner].kill()
	// The worker is dead after the 1s timeout, and the job moves soon
	// after; a dead worker stays listed for 20 timeouts.
	waitCluster(t, ctx, 15*time.Second, owner+" shown dead and the job on "+other, func(c shownCluster) bool {
		o, x := c.worker(owner), c.worker(other)
		return c.Panel && len(c.Workers) == 2 &&
			o.Alive == "false" && o.State == "dead" && o.Dead && len(o.Jobs) == 0 &&
			x.Alive == "true" && x.State == "alive" && x.Slots == "1/3" && slices.Equal(x.Jobs, []string{job}) &&
			c.JobWorkers[job] == other
	})
	if info := workers[other].job(job); info.State.Terminal() || info.Worker != other {
		t.Errorf("after the failover the job is %s on worker %q, want running on %s", info.State, info.Worker, other)
	}
}
