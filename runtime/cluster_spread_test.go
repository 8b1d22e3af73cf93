package runtime

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/checkpoint"
	"wasmstream.io/platform/cluster"
	"wasmstream.io/platform/internal/wasmbuild"
)

// spreadCluster is three cluster workers of two slots each on one
// JetStream, with the seqcheck module and keys×perKey records in IN.
func spreadCluster(t *testing.T, keys, perKey int) (ms []*Manager, js jetstream.JetStream, module string) {
	t.Helper()
	ctx := context.Background()
	js = newTestJetStream(t)
	for _, id := range []string{"a", "b", "c"} {
		ms = append(ms, newSpreadWorker(t, js, id))
	}
	mod, err := ms[0].UploadModule(ctx, wasmbuild.UDF(t, "seqcheck"))
	if err != nil {
		t.Fatal(err)
	}
	seqcheckInput(t, js, keys, perKey)
	waitFor(t, "every worker sees the others", func() bool {
		for _, m := range ms {
			if ws, _ := m.Workers(ctx); len(ws) != 3 {
				return false
			}
		}
		return true
	})
	return ms, js, mod.ID
}

// spreadTimeout is the spread tests' heartbeat timeout: long enough for
// workers busy compiling modules on a loaded machine.
const spreadTimeout = 2 * time.Second

// newSpreadWorker is a cluster worker of two slots.
func newSpreadWorker(t *testing.T, js jetstream.JetStream, id string) *Manager {
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
			Worker:  cluster.Worker{ID: id, Addr: "http://" + id, Slots: 2, Version: "v1", Started: time.Now()},
			Timeout: spreadTimeout,
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	return m
}

// spreadSpec is a keyed exactly-once job at parallelism 4 spread over the
// workers: every hash edge crosses workers.
func spreadSpec(module, checkpoint, sink string) string {
	return fmt.Sprintf(`
name: spread
parallelism: 4
placement: spread
checkpoint: {interval: 100ms, mode: exactly_once%s}
restart: {strategy: fixed_delay, delay: 10ms}
sources: [{id: in, jetstream: {stream: IN, subjects: ["in.0", "in.1", "in.2", "in.3"], bounded: true}}]
operators: [{id: track, input: in, key_by: {field: k}, process: {module: %s, function: track}}]
sinks: [{id: out, input: track, jetstream: {subject: out}%s}]
`, checkpoint, module, sink)
}

// waitFinished waits for the job to finish on m. Under the race detector on
// a loaded machine a worker can take over a minute to compile the Go
// module for its part, and the run restarts until it has.
func waitFinished(t *testing.T, m *Manager, id string) JobInfo {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	info, err := m.WaitJob(ctx, id)
	if err != nil || info.State != StateFinished {
		info, _ = m.GetJob(context.Background(), id)
		for _, v := range info.Vertices {
			t.Logf("%s in %d out %d workers %v", v.ID, v.RecordsIn, v.RecordsOut, v.Workers)
		}
		t.Logf("checkpoints %+v", info.Checkpoint)
		t.Fatalf("job %s: %s, %v", info.State, info.Failure, err)
	}
	return info
}

// A keyed exactly-once job spread over three workers gives each key's
// records exactly once, in order, with each record's state; the job's info
// names the worker of every subtask, and its figures count the subtasks of
// every worker.
func TestClusterSpreadJobExactlyOnce(t *testing.T) {
	const keys, perKey = 60, 100
	ms, js, mod := spreadCluster(t, keys, perKey)
	info, err := ms[0].SubmitJob(context.Background(), []byte(spreadSpec(mod, "", "")))
	if err != nil {
		t.Fatal(err)
	}
	owner := ms[0]
	for _, m := range ms {
		if _, ok := m.job(info.ID); ok {
			owner = m
		}
	}
	info = waitFinished(t, owner, info.ID)
	checkSeqOutput(t, js, keys, perKey)
	workers := map[string]bool{}
	for _, v := range info.Vertices {
		if len(v.Workers) != v.Parallelism {
			t.Fatalf("vertex %s: workers %v for %d subtasks", v.ID, v.Workers, v.Parallelism)
		}
		if total := int64(keys * perKey); v.RecordsIn != total || v.Kind != "sink" && v.RecordsOut != total {
			t.Fatalf("vertex %s: %d records in, %d out, want %d", v.ID, v.RecordsIn, v.RecordsOut, total)
		}
		for _, w := range v.Workers {
			workers[w] = true
		}
	}
	if len(workers) != 3 {
		t.Fatalf("the job ran on %v, want all three workers", workers)
	}
}

// A worker running part of a spread job stops heartbeating mid-job, as a
// killed or frozen one does, and keeps running its part for a while, as a
// frozen one resumed would: the leader restarts the whole job from its
// latest checkpoint on the two live workers, and the output is still each
// key's records exactly once, in order: the stopped worker's sink commits
// are fenced off. Unaligned, the worker stops once a checkpoint holds
// records in flight (most channels run between workers), which a restore
// replays.
func TestClusterSpreadWorkerGone(t *testing.T) {
	tests := []struct {
		name, checkpoint string
	}{
		{"aligned", ""},
		{"unaligned", ", unaligned: true"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const keys, perKey = 60, 200
			ms, js, mod := spreadCluster(t, keys, perKey)
			ctx := context.Background()
			info, err := ms[0].SubmitJob(ctx, []byte(spreadSpec(mod, tt.checkpoint, ", throttle: 500")))
			if err != nil {
				t.Fatal(err)
			}
			leader, _ := ms[0].job(info.ID)
			unaligned := tt.checkpoint != ""
			waitFor(t, "a checkpoint (unaligned: with records in flight)", func() bool {
				for _, st := range leader.x.Checkpoints.History.All() {
					if st.Status == checkpoint.StatusCompleted && (!unaligned || st.InFlight > 0) {
						return true
					}
				}
				return false
			})
			leader.mu.Lock()
			a := leader.assignment
			leader.mu.Unlock()
			var gone *Manager
			for _, m := range ms[1:] {
				if slices.Contains(a.Workers(), m.cluster.member.ID()) {
					gone = m
					break
				}
			}
			gone.cluster.member.Pause()
			info = waitFinished(t, ms[0], info.ID)
			if info.Restarts < 1 || info.Checkpoint.Restored == nil {
				t.Fatalf("%d restarts, restored %+v: want a restart from a checkpoint", info.Restarts, info.Checkpoint.Restored)
			}
			for _, v := range info.Vertices {
				if slices.Contains(v.Workers, gone.cluster.member.ID()) {
					t.Fatalf("vertex %s still placed on the gone worker: %v", v.ID, v.Workers)
				}
			}
			checkSeqOutput(t, js, keys, perKey)
		})
	}
}

// A throttled sink on the leader backpressures the source subtask another
// worker runs, across the network exchange, and the leader's backpressure
// API shows it as it would inside one process: that subtask high, the
// sink the bottleneck.
func TestClusterSpreadBackpressureAcrossWorkers(t *testing.T) {
	ctx := context.Background()
	js := newTestJetStream(t)
	a, b := newSpreadWorker(t, js, "a"), newSpreadWorker(t, js, "b")
	waitFor(t, "the workers see each other", func() bool {
		wa, _ := a.Workers(ctx)
		wb, _ := b.Workers(ctx)
		return len(wa) == 2 && len(wb) == 2
	})
	info, err := a.SubmitJob(ctx, []byte(`
name: slow-remote
placement: spread
parallelism: 2
sources: [{id: gen, generator: {kind: sequence}}]
sinks: [{id: slow, input: gen, parallelism: 1, partition: rebalance, discard: true, throttle: 2000}]
`))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _, _ = a.CancelJob(ctx, info.ID) }()
	bp := waitBackpressure(t, a, info.ID, func(bp BackpressureInfo) bool {
		for _, v := range bp.Vertices {
			if v.ID != "gen" {
				continue
			}
			for _, s := range v.Subtasks {
				if s.Subtask == 1 && s.Level == LevelHigh {
					return bp.Bottleneck != nil
				}
			}
		}
		return false
	})
	if bp.Bottleneck.Vertex != "slow" {
		t.Fatalf("bottleneck %+v, want the sink", bp.Bottleneck)
	}
	got, err := a.GetJob(ctx, info.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range got.Vertices {
		if v.ID == "gen" && !slices.Equal(v.Workers, []string{"a", "b"}) {
			t.Fatalf("gen runs on %v, want [a b]", v.Workers)
		}
	}
}

// A keyed exactly-once job spread over two workers at parallelism 2 is
// rescaled in place to 4: the new run is placed on all three workers, each
// key group's state restored into whichever worker now runs it, and every
// key's records, before and after, come out exactly once, in order, each
// with the state of the record before.
func TestClusterSpreadRescale(t *testing.T) {
	const keys, perKey = 60, 50
	ctx := context.Background()
	ms, js, mod := spreadCluster(t, keys, perKey)
	spec := fmt.Sprintf(`
name: spread-rescale
parallelism: 2
placement: spread
checkpoint: {interval: 100ms, mode: exactly_once}
sources: [{id: in, jetstream: {stream: IN, subjects: ["in.0", "in.1", "in.2", "in.3"]}}]
operators: [{id: track, input: in, key_by: {field: k}, process: {module: %s, function: track}}]
sinks: [{id: out, input: track, jetstream: {subject: out}}]
`, mod)
	info, err := ms[0].SubmitJob(ctx, []byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	leader := func() *Manager {
		for _, m := range ms {
			if j, ok := m.job(info.ID); ok && j.state() == StateRunning {
				return m
			}
		}
		return nil
	}
	placed := func(m *Manager, parallelism int) []string {
		got, err := m.GetJob(ctx, info.ID)
		if err != nil {
			t.Fatal(err)
		}
		// Every vertex at the parallelism wanted, each subtask placed.
		var ws []string
		for _, v := range got.Vertices {
			if v.Parallelism != parallelism || slices.Contains(v.Workers, "") {
				return nil
			}
			ws = append(ws, v.Workers...)
		}
		slices.Sort(ws)
		return slices.Compact(ws)
	}
	outputs := func() uint64 {
		st, err := js.Stream(ctx, "OUT")
		if err != nil {
			t.Fatal(err)
		}
		si, err := st.Info(ctx, jetstream.WithSubjectFilter("out"))
		if err != nil {
			t.Fatal(err)
		}
		return si.State.Subjects["out"]
	}
	// The slots each worker's heartbeat says it uses are the slots of the
	// job placed on it: the leader counts only its own.
	slotsUsed := func(want map[string]int) bool {
		ws, err := ms[0].Workers(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int{}
		for _, w := range ws {
			if w.Used > 0 {
				got[w.ID] = w.Used
			}
		}
		return maps.Equal(got, want)
	}
	slotsOf := func(m *Manager) map[string]int {
		got, err := m.GetJob(ctx, info.ID)
		if err != nil {
			t.Fatal(err)
		}
		slots := map[string]map[int]bool{}
		for _, v := range got.Vertices {
			for i, w := range v.Workers {
				if slots[w] == nil {
					slots[w] = map[int]bool{}
				}
				slots[w][i] = true
			}
		}
		out := map[string]int{}
		for w, s := range slots {
			out[w] = len(s)
		}
		return out
	}
	waitFor(t, "every first record out, on two workers", func() bool {
		m := leader()
		return m != nil && len(placed(m, 2)) == 2 && outputs() == keys*perKey
	})
	waitFor(t, "one slot used on each of the two workers", func() bool {
		return slotsUsed(slotsOf(leader()))
	})
	if s := slotsOf(leader()); len(s) != 2 {
		t.Fatalf("slots %v, want one on each of two workers", s)
	}
	if _, err := leader().RescaleJob(ctx, info.ID, RescaleRequest{Parallelism: 4}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the job running at parallelism 4, on three workers", func() bool {
		m := leader()
		return m != nil && len(placed(m, 4)) == 3
	})
	waitFor(t, "four slots used, two on one worker and one on each other", func() bool {
		return slotsUsed(slotsOf(leader()))
	})
	if s := slices.Sorted(maps.Values(slotsOf(leader()))); !slices.Equal(s, []int{1, 1, 2}) {
		t.Fatalf("slots per worker %v, want 1, 1 and 2", s)
	}
	for s := perKey + 1; s <= 2*perKey; s++ {
		for k := range keys {
			if _, err := js.PublishAsync(fmt.Sprintf("in.%d", k%4), fmt.Appendf(nil, `{"k":"key%d","s":%d}`, k, s)); err != nil {
				t.Fatal(err)
			}
		}
	}
	<-js.PublishAsyncComplete()
	waitFor(t, "every record out", func() bool { return outputs() >= 2*keys*perKey })
	// The rescaled version ran them, and it committed: it was not rolled
	// back to parallelism 2, which would run them all the same.
	waitFor(t, "the rescale committed", func() bool {
		got, err := leader().GetJob(ctx, info.ID)
		if err != nil {
			t.Fatal(err)
		}
		last := got.Versions[len(got.Versions)-1]
		if last.Outcome == VersionRolledBack {
			t.Fatalf("the rescale was rolled back: %s", last.Reason)
		}
		return len(got.Versions) == 2 && last.Outcome == VersionRunning && last.Parallelism["track"] == 4
	})
	if ws := placed(leader(), 4); len(ws) != 3 {
		t.Fatalf("the job runs on %v after the rescale, want three workers", ws)
	}
	if _, err := leader().CancelJob(ctx, info.ID); err != nil {
		t.Fatal(err)
	}
	checkSeqOutput(t, js, keys, 2*perKey)
}
