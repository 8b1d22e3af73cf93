package exec

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/plan"
	"wasmstream.io/platform/runtime/spec"
)

// remoteJob is a job of two generator subtasks rebalancing to two sink
// subtasks that publish to subject.
func remoteJob(t *testing.T, js jetstream.JetStream, subject string) *Job {
	t.Helper()
	j, err := spec.Parse(fmt.Appendf(nil, `
name: remote
parallelism: 2
sources: [{id: gen, generator: {kind: sequence, count: 5000}}]
sinks: [{id: out, input: gen, partition: rebalance, jetstream: {subject: %s}}]
`, subject))
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Build(j, func(string) (abi.Description, bool) { return abi.Description{}, false })
	if err != nil {
		t.Fatal(err)
	}
	x := &Job{ID: "job1", Plan: p, Log: slog.New(slog.DiscardHandler), Observer: nopObserver{},
		Env: &Env{JetStream: js, DataDir: t.TempDir(), Budgets: Budgets{}.WithDefaults()}}
	x.Counters = map[string][]*Counters{}
	for _, v := range p.Vertices {
		for range v.Parallelism {
			x.Counters[v.ID] = append(x.Counters[v.ID], NewCounters())
		}
	}
	return x
}

type nopObserver struct{}

func (nopObserver) Running([]*Task) func()               { return func() {} }
func (nopObserver) Restarting(int, time.Duration, error) {}

// payloads are the payloads on subject, sorted.
func payloads(t *testing.T, js jetstream.JetStream, stream string) []string {
	t.Helper()
	ctx := context.Background()
	cons, err := js.OrderedConsumer(ctx, stream, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for {
		batch, err := cons.Fetch(4096, jetstream.FetchMaxWait(500*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		n := len(out)
		for m := range batch.Messages() {
			out = append(out, string(m.Data()))
		}
		if len(out) == n {
			break
		}
	}
	slices.Sort(out)
	return out
}

// A run placed on two workers (two Jobs on one NATS, as two processes
// would be) carries every channel between them over the network exchange
// and writes exactly what the same job writes in one process.
func TestRemoteChannelsMatchOneProcess(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, js := embeddedNATS(t)
	for _, s := range []string{"ONE", "TWO"} {
		if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: s, Subjects: []string{s}, Storage: jetstream.MemoryStorage}); err != nil {
			t.Fatal(err)
		}
	}
	if err := remoteJob(t, js, "ONE").RunWithRestarts(ctx); err != nil {
		t.Fatal(err)
	}
	tasks := map[string]string{"gen[0]": "a", "gen[1]": "b", "out[0]": "b", "out[1]": "a"}
	alive := func(string) bool { return true }
	leader := remoteJob(t, js, "TWO")
	var placed []string
	leader.Place = func(_ context.Context, _ string, _ int64, names []string) (*Placement, error) {
		placed = names
		return &Placement{Run: 7, Self: "a", Leader: "a", Tasks: tasks, Alive: alive}, nil
	}
	part := remoteJob(t, js, "TWO")
	partDone := make(chan error, 1)
	go func() {
		partDone <- part.RunPart(ctx, &Placement{Run: 7, Self: "b", Leader: "a", Tasks: tasks, Alive: alive})
	}()
	if err := leader.RunWithRestarts(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-partDone; err != nil {
		t.Fatal(err)
	}
	if want := []string{"gen[0]", "gen[1]", "out[0]", "out[1]"}; !slices.Equal(placed, want) {
		t.Fatalf("placed %v, want %v", placed, want)
	}
	one, two := payloads(t, js, "ONE"), payloads(t, js, "TWO")
	if len(one) != 5000 || !slices.Equal(one, two) {
		t.Fatalf("one process wrote %d records, two workers %d (equal: %v)", len(one), len(two), slices.Equal(one, two))
	}
	// The leader's figures hold the part's, sent with its end.
	var in, out int64
	for _, c := range leader.Counters["out"] {
		in += c.In.Load()
	}
	for _, c := range leader.Counters["gen"] {
		out += c.Out.Load()
	}
	if in != 5000 || out != 5000 {
		t.Fatalf("the leader counts %d records into the sinks, %d out of the sources, want 5000", in, out)
	}
}
