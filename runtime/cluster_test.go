package runtime

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/checkpoint"
	"wasmstream.io/platform/cluster"
)

const clusterTestTimeout = 500 * time.Millisecond

// genJob runs until cancelled and checkpoints every 200 ms.
const genJob = `name: gen
parallelism: 2
checkpoint: {interval: 200ms}
sources:
  - id: clicks
    generator: {kind: clicks, rate: 200, count: 100000000, keys: 50}
sinks:
  - id: out
    input: clicks
    discard: true
`

// newClusterWorker is a manager in cluster mode on js, with the checkpoint store
// all workers share.
func newClusterWorker(t *testing.T, js jetstream.JetStream, id string, slots int) *Manager {
	t.Helper()
	return newVersionedWorker(t, js, id, slots, "v1")
}

// newVersionedWorker is newClusterWorker of another platform version.
func newVersionedWorker(t *testing.T, js jetstream.JetStream, id string, slots int, version string) *Manager {
	t.Helper()
	ctx := context.Background()
	store, err := checkpoint.NewObjectStore(ctx, js, "CLUSTER_TEST_CHECKPOINTS", 1)
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewManager(ctx, Config{
		DataDir: t.TempDir(), Host: newTestHost(t), JetStream: js, Checkpoints: store, SharedModules: true,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Cluster: &cluster.Config{
			Worker:  cluster.Worker{ID: id, Addr: "http://" + id, Slots: slots, Version: version, Started: time.Now()},
			Timeout: clusterTestTimeout,
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	return m
}

// runsOn says which of the managers run job id.
func runsOn(id string, ms ...*Manager) []int {
	var on []int
	for i, m := range ms {
		if j, ok := m.job(id); ok && !j.state().Terminal() {
			on = append(on, i)
		}
	}
	return on
}

func TestClusterJobRunsOnOneWorkerAndListsEverywhere(t *testing.T) {
	ctx := context.Background()
	js := newTestJetStream(t)
	a := newClusterWorker(t, js, "a", 4)
	b := newClusterWorker(t, js, "b", 4)
	info, err := a.SubmitJob(ctx, []byte(genJob))
	if err != nil {
		t.Fatal(err)
	}
	if on := runsOn(info.ID, a, b); len(on) != 1 || on[0] != 0 {
		t.Fatalf("the job runs on %v, want only on a", on)
	}
	waitFor(t, "b lists the job as a's", func() bool {
		got, err := b.GetJob(ctx, info.ID)
		return err == nil && got.Worker == "a" && got.State == StateRunning
	})
	if addr, ok := b.JobOwner(info.ID); !ok || addr != "http://a" {
		t.Fatalf("b.JobOwner = %q, %v; want http://a", addr, ok)
	}
	if _, ok := a.JobOwner(info.ID); ok {
		t.Fatal("a runs the job: nothing to forward")
	}
	// a now uses 2 of its 4 slots: the next job belongs on b.
	waitFor(t, "b is placed next", func() bool { addr, ok := a.PlaceJob(); return ok && addr == "http://b" })
	ws, err := b.Workers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != 2 || len(ws[0].Jobs) != 1 || ws[0].Jobs[0] != info.ID || len(ws[1].Jobs) != 0 {
		t.Fatalf("workers = %+v", ws)
	}
}

func TestClusterHandsJobsOverOnClose(t *testing.T) {
	ctx := context.Background()
	js := newTestJetStream(t)
	a := newClusterWorker(t, js, "a", 4)
	b := newClusterWorker(t, js, "b", 4)
	info, err := a.SubmitJob(ctx, []byte(genJob))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a checkpoint", func() bool {
		got, _ := a.GetJob(ctx, info.ID)
		return got.Checkpoint != nil && got.Checkpoint.Completed >= 2
	})
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "b runs the job", func() bool { on := runsOn(info.ID, b); return len(on) == 1 })
	j, _ := b.job(info.ID)
	waitFor(t, "b restores a's checkpoint", func() bool {
		cp := j.x.Checkpoints.Info()
		return cp != nil && cp.Restored != nil && cp.Restored.Checkpoint >= 2
	})
}

func TestClusterWorkersStartedAtOnceRunAJobOnce(t *testing.T) {
	ctx := context.Background()
	js := newTestJetStream(t)
	// A job whose worker died before any other started: a record in the
	// registry and a lease nobody renews.
	first := newClusterWorker(t, js, "first", 4)
	info, err := first.SubmitJob(ctx, []byte(genJob))
	if err != nil {
		t.Fatal(err)
	}
	j, _ := first.job(info.ID)
	first.cluster.stop()
	<-first.cluster.done
	j.lease.Forget()
	// Three workers start at once; the lease expires under all of them.
	ms := make([]*Manager, 3)
	var wg sync.WaitGroup
	for i := range ms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ms[i] = newClusterWorker(t, js, string(rune('x'+i)), 4)
		}()
	}
	wg.Wait()
	waitFor(t, "a worker takes the job", func() bool { return len(runsOn(info.ID, ms...)) > 0 })
	// Watch for a while: never two at once.
	for end := time.Now().Add(4 * clusterTestTimeout); time.Now().Before(end); time.Sleep(clusterTestTimeout / 20) {
		if on := runsOn(info.ID, ms...); len(on) > 1 {
			t.Fatalf("the job runs on %v at once", on)
		}
	}
}

// A worker of another version is listed, but takes neither new jobs nor
// the jobs of a dead worker of this version.
func TestClusterKeepsJobsToTheirVersion(t *testing.T) {
	ctx := context.Background()
	js := newTestJetStream(t)
	a := newClusterWorker(t, js, "a", 1)
	other := newVersionedWorker(t, js, "other", 16, "v2")
	waitFor(t, "both listed", func() bool { ws, _ := a.Workers(ctx); return len(ws) == 2 && ws[0].Alive && ws[1].Alive })
	// other has far more free slots, but is of another version.
	if addr, ok := a.PlaceJob(); ok {
		t.Fatalf("a places a new job on %s, want on itself", addr)
	}
	info, err := a.SubmitJob(ctx, []byte(genJob))
	if err != nil {
		t.Fatal(err)
	}
	// a dies: its lease expires, and b, of a's version, takes the job,
	// however many more slots other has free.
	b := newClusterWorker(t, js, "b", 1)
	waitFor(t, "b listed", func() bool { return b.cluster.member.Alive("a") && a.cluster.member.Alive("b") })
	die(a, info.ID)
	waitFor(t, "b takes the job over", func() bool { return len(runsOn(info.ID, b)) == 1 })
	if on := runsOn(info.ID, other); len(on) != 0 {
		t.Fatal("a worker of another version took the job over")
	}
	// b dies too: no worker of v1 is left (the last was upgraded), and
	// the worker of v2 takes the job, as an upgraded platform restores
	// the old one's checkpoints.
	die(b, info.ID)
	waitFor(t, "other takes the job over", func() bool { return len(runsOn(info.ID, other)) == 1 })
}

// die makes m stop heartbeating and renewing the lease of job, as a kill
// would, and stop taking jobs over.
func die(m *Manager, job string) {
	j, _ := m.job(job)
	m.cluster.stop()
	<-m.cluster.done
	j.lease.Forget()
	m.cluster.member.Pause()
}

// Ended jobs whose worker is gone are swept by one live worker.
func TestClusterSweepsEndedJobsOfGoneWorkers(t *testing.T) {
	ctx := context.Background()
	js := newTestJetStream(t)
	a := newClusterWorker(t, js, "a", 4)
	b := newClusterWorker(t, js, "b", 4)
	info, err := b.SubmitJob(ctx, []byte(genJob))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.CancelJob(ctx, info.ID); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a sees the job canceled", func() bool {
		got, err := a.GetJob(ctx, info.ID)
		return err == nil && got.State == StateCanceled
	})
	waitFor(t, "b gone", func() bool { ws, _ := a.Workers(ctx); return len(ws) == 1 })
	if removed := a.sweep(ctx, time.Now().Add(time.Hour), time.Minute); len(removed) != 1 || removed[0] != info.ID {
		t.Fatalf("swept %v, want [%s]", removed, info.ID)
	}
	if _, err := a.GetJob(ctx, info.ID); err == nil {
		waitFor(t, "the record gone", func() bool { _, err := a.GetJob(ctx, info.ID); return err != nil })
	}
}
