package cluster

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/connector"
)

const testTimeout = 400 * time.Millisecond

func startJetStream(t *testing.T) jetstream.JetStream {
	t.Helper()
	ctx := context.Background()
	srv, err := connector.StartEmbedded(ctx, connector.EmbeddedConfig{DataDir: t.TempDir(), Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	nc, js, err := connector.Connect(ctx, srv.ClientURL(), "cluster-test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return js
}

// join adds a worker with the given slots and a fixed job load.
func join(t *testing.T, js jetstream.JetStream, id string, slots, used int) *Member {
	t.Helper()
	m, err := Join(context.Background(), js, Config{
		Worker:  Worker{ID: id, Addr: "http://" + id, Slots: slots, Version: "v1", Started: time.Now()},
		Timeout: testTimeout,
	}, func() ([]string, int) { return nil, used })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Leave(context.Background()) })
	return m
}

// eventually polls cond until it holds or a generous deadline passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * testTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, 20*testTimeout)
		}
		time.Sleep(testTimeout / 20)
	}
}

// takeOver takes job's lease over for m once m has seen it expire. Under
// load m's watch may show a last renewal of the old holder only after m
// judged the lease expired by an older revision: TakeOver then refuses
// (ErrHeld), rightly, and succeeds once that revision has aged too.
func takeOver(t *testing.T, m *Member, job string) *Lease {
	t.Helper()
	var lease *Lease
	eventually(t, "lease of "+job+" taken over", func() bool {
		l, err := m.TakeOver(context.Background(), job)
		if errors.Is(err, ErrHeld) {
			return false
		}
		if err != nil {
			t.Fatal(err)
		}
		lease = l
		return true
	})
	return lease
}

func TestMembership(t *testing.T) {
	js := startJetStream(t)
	a := join(t, js, "a", 2, 0)
	b := join(t, js, "b", 4, 1)
	eventually(t, "both workers seen alive", func() bool { return a.Alive("b") && b.Alive("a") })
	ws := a.Workers()
	if len(ws) != 2 || ws[0].ID != "a" || ws[1].ID != "b" || ws[1].Slots != 4 || ws[1].Used != 1 || ws[1].Addr != "http://b" {
		t.Fatalf("workers = %+v", ws)
	}
	// b has 3 free slots, a 2: new jobs go to b, and b is preferred for
	// takeovers.
	if w, err := a.Place(); err != nil || w.ID != "b" {
		t.Fatalf("Place = %v, %v; want b", w.ID, err)
	}
	if a.Preferred("") || !b.Preferred("") {
		t.Fatal("b should be the preferred taker")
	}
	if a.Preferred("v2") {
		t.Fatal("no worker of v2 is alive, so none is preferred")
	}
	if err := b.Leave(context.Background()); err != nil {
		t.Fatal(err)
	}
	eventually(t, "b gone", func() bool { return !a.Alive("b") && len(a.Workers()) == 1 })
	if w, err := a.Place(); err != nil || w.ID != "a" {
		t.Fatalf("Place after b left = %v, %v; want a", w.ID, err)
	}
}

func TestDeadWorkerByMissingHeartbeat(t *testing.T) {
	js := startJetStream(t)
	a := join(t, js, "a", 1, 0)
	b := join(t, js, "b", 1, 0)
	eventually(t, "b seen", func() bool { return a.Alive("b") })
	// Stop b's heartbeats without removing its entry, as a kill would.
	b.stop()
	b.done.Wait()
	eventually(t, "b dead", func() bool { return !a.Alive("b") })
	ws := a.Workers()
	if len(ws) != 2 || ws[1].ID != "b" || ws[1].Alive {
		t.Fatalf("a dead worker stays listed, not alive: %+v", ws)
	}
}

func TestLeaseTakeOverKeepsLineage(t *testing.T) {
	ctx := context.Background()
	js := startJetStream(t)
	a := join(t, js, "a", 1, 0)
	b := join(t, js, "b", 1, 0)
	la, err := a.Acquire(ctx, "job1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Acquire(ctx, "job1"); !errors.Is(err, ErrHeld) {
		t.Fatalf("second Acquire: %v, want ErrHeld", err)
	}
	eventually(t, "b sees the lease", func() bool { return b.Lease("job1").Holder == "a" })
	// a renews: b cannot take over, however long it waits.
	time.Sleep(2 * testTimeout)
	if _, err := b.TakeOver(ctx, "job1"); !errors.Is(err, ErrHeld) {
		t.Fatalf("TakeOver of a renewed lease: %v, want ErrHeld", err)
	}
	for _, id := range []int64{1, 2, 3} {
		if err := la.Trigger(ctx, id); err != nil {
			t.Fatal(err)
		}
		if id < 3 {
			if err := la.Complete(ctx, id); err != nil {
				t.Fatal(err)
			}
		}
	}
	// a stops renewing (a pause or a kill): its lease expires.
	la.Forget()
	eventually(t, "lease expired", func() bool { return b.Lease("job1").Expired })
	lb := takeOver(t, b, "job1")
	tests := []struct {
		id     int64
		counts bool
	}{{1, true}, {2, true}, {3, false}, {4, false}}
	for _, tt := range tests {
		if got := lb.Counts(tt.id); got != tt.counts {
			t.Errorf("Counts(%d) = %v, want %v", tt.id, got, tt.counts)
		}
	}
	if got := lb.NextID(); got != 4 {
		t.Errorf("NextID = %d, want 4: id 3 was allocated by a", got)
	}
	// The zombie can neither allocate nor complete a checkpoint.
	if err := la.Trigger(ctx, 4); !errors.Is(err, ErrLost) {
		t.Errorf("zombie Trigger: %v, want ErrLost", err)
	}
	if err := lb.Trigger(ctx, 4); err != nil {
		t.Fatal(err)
	}
	if err := lb.Complete(ctx, 4); err != nil {
		t.Fatal(err)
	}
	if !lb.Counts(4) || lb.Counts(3) {
		t.Error("4 completed under b counts, 3 stays an orphan")
	}
	if st := a.Lease("job1"); st.Holder != "b" {
		t.Errorf("a sees holder %q, want b", st.Holder)
	}
}

func TestLeaseLostIsSignalled(t *testing.T) {
	ctx := context.Background()
	js := startJetStream(t)
	a := join(t, js, "a", 1, 0)
	b := join(t, js, "b", 1, 0)
	la, err := a.Acquire(ctx, "job1")
	if err != nil {
		t.Fatal(err)
	}
	// A paused holder: renewals stop but the lease object lives on, as
	// in a SIGSTOPped process.
	close(la.stop)
	<-la.done
	eventually(t, "lease expired", func() bool { return b.Lease("job1").Expired })
	takeOver(t, b, "job1")
	select {
	case <-la.Lost():
	case <-time.After(20 * testTimeout):
		t.Fatal("the old holder was not told its lease moved")
	}
	if err := la.Complete(ctx, 1); !errors.Is(err, ErrLost) {
		t.Fatalf("Complete after loss: %v, want ErrLost", err)
	}
}

func TestLeaseRelease(t *testing.T) {
	ctx := context.Background()
	js := startJetStream(t)
	a := join(t, js, "a", 1, 0)
	b := join(t, js, "b", 1, 0)
	la, err := a.Acquire(ctx, "job1")
	if err != nil {
		t.Fatal(err)
	}
	if err := la.Trigger(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := la.Complete(ctx, 1); err != nil {
		t.Fatal(err)
	}
	eventually(t, "b sees the lease", func() bool { return b.Lease("job1").Held })
	if err := la.Release(ctx); err != nil {
		t.Fatal(err)
	}
	// Released, the lease is takeable at once, without waiting out the
	// timeout, and keeps the lineage.
	eventually(t, "b sees it released", func() bool { st := b.Lease("job1"); return !st.Held && st.Expired })
	lb, err := b.TakeOver(ctx, "job1")
	if err != nil {
		t.Fatal(err)
	}
	if !lb.Counts(1) || lb.NextID() != 2 {
		t.Errorf("lineage lost on release: Counts(1) = %v, NextID = %d", lb.Counts(1), lb.NextID())
	}
	select {
	case <-la.Lost():
		t.Fatal("a released lease is not lost")
	default:
	}
}

func TestJoinRefusesBadConfig(t *testing.T) {
	js := startJetStream(t)
	tests := []struct {
		name string
		w    Worker
		want string
	}{
		{"no id", Worker{Addr: "x", Slots: 1}, "no id"},
		{"no addr", Worker{ID: "a", Slots: 1}, "no HTTP address"},
		{"no slots", Worker{ID: "a", Addr: "x"}, "slots must be at least 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Join(context.Background(), js, Config{Worker: tt.w}, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}
