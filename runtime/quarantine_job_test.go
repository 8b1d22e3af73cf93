package runtime

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/internal/wasmbuild"
	"wasmstream.io/platform/runtime/operator"
)

// letter is a message of the dead-letter stream: its input's number and
// whether it is marked parked.
type letter struct {
	n      int
	parked bool
}

func deadLetters(t *testing.T, js jetstream.JetStream, name string) []letter {
	t.Helper()
	var out []letter
	for _, m := range streamMessages(t, js, name) {
		n, err := strconv.Atoi(m.Header.Get("n"))
		if err != nil || string(m.Data) != "poison" || m.Header.Get(operator.HeaderOperator) != "m" || m.Header.Get(operator.HeaderError) == "" {
			t.Fatalf("dead letter %d: %q with headers %v", m.Sequence, m.Data, m.Header)
		}
		out = append(out, letter{n, m.Header.Get(operator.HeaderQuarantine) == "parked"})
	}
	slices.SortFunc(out, func(a, b letter) int { return a.n - b.n })
	return out
}

// TestQuarantinePoisonKey runs a keyed map that rejects every record of the
// key "poison" under on_udf_error: {policy: quarantine, after: 3}. The other
// keys' output is exact; each poison record is dead-lettered exactly once,
// the first two unmarked and the rest marked parked and kept. The parked
// list survives a restart of the platform; a release replays the kept
// records once (the function still rejects them: the first two are
// dead-lettered, the rest parked again), and a restart after the release
// replays nothing again.
func TestQuarantinePoisonKey(t *testing.T) {
	p := newRecoveryPlatform(t)
	kinds, err := p.m.UploadModule(context.Background(), wasmbuild.UDF(t, "kinds"))
	if err != nil {
		t.Fatal(err)
	}
	faulty, err := p.m.UploadModule(context.Background(), wasmbuild.UDF(t, "faulty-wat"))
	if err != nil {
		t.Fatal(err)
	}
	p.stream("IN", "in")
	p.stream("OUT", "out")
	p.stream("DLQ", "dlq")
	const n = 30
	var want []string
	var poison []int
	for i := range n {
		v := fmt.Sprintf("v%d", i)
		if i%3 == 1 {
			v = "poison"
			poison = append(poison, i)
		} else {
			want = append(want, v)
		}
		msg := &nats.Msg{Subject: "in", Data: []byte(v), Header: nats.Header{"n": []string{strconv.Itoa(i)}}}
		if _, err := p.js.PublishMsg(context.Background(), msg); err != nil {
			t.Fatal(err)
		}
	}
	info, err := p.m.SubmitJob(context.Background(), fmt.Appendf(nil, `
name: poison-keys
checkpoint: {interval: 50ms, mode: exactly_once}
on_udf_error: {policy: quarantine, after: 3}
dead_letter_subject: dlq
sources: [{id: in, jetstream: {stream: IN}}]
operators:
  - {id: m, input: in, parallelism: 2, key_by: {module: %s, function: by_value}, map: {module: %s, function: reject}}
sinks: [{id: out, input: m, jetstream: {subject: out}}]
`, kinds.ID, faulty.ID))
	if err != nil {
		t.Fatal(err)
	}
	id := info.ID
	// Parked: every poison record from the third on; dead-lettered
	// unmarked: the first two.
	var wantLetters []letter
	for k, i := range poison {
		wantLetters = append(wantLetters, letter{i, k >= 2})
	}
	p.checkpointed(id, len(want))
	waitFor(t, "the dead letters", func() bool { return len(deadLetters(t, p.js, "DLQ")) >= len(wantLetters) })
	settle := func() {
		at := p.info(id).Checkpoint.Completed
		waitFor(t, "two more checkpoints", func() bool { return p.info(id).Checkpoint.Completed >= at+2 })
	}
	settle()
	check := func(stage string, letters []letter, kept int) {
		t.Helper()
		out := streamValues(t, p.js, "OUT")
		slices.Sort(out)
		sorted := slices.Clone(want)
		slices.Sort(sorted)
		if !slices.Equal(out, sorted) {
			t.Fatalf("%s: output %q, want %q", stage, out, sorted)
		}
		if got := deadLetters(t, p.js, "DLQ"); !slices.Equal(got, letters) {
			t.Fatalf("%s: dead letters %v, want %v", stage, got, letters)
		}
		keys, err := p.m.Quarantined(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) != 1 || keys[0].Key != "poison" || keys[0].Operator != "m" || keys[0].Failures != 3 || keys[0].Kept != kept ||
			keys[0].FirstError == "" {
			t.Fatalf("%s: quarantined %+v, want poison with %d kept", stage, keys, kept)
		}
	}
	check("first run", wantLetters, len(poison)-2)

	p.stop()
	p.start()
	waitFor(t, "the job running again", func() bool { return running(t, p.m, id) && p.info(id).State == StateRunning })
	check("after a restart", wantLetters, len(poison)-2)

	if _, err := p.m.ReleaseQuarantined(context.Background(), id, "v0"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("release of a key not parked: %v", err)
	}
	released, err := p.m.ReleaseQuarantined(context.Background(), id, "poison")
	if err != nil || len(released) != 1 {
		t.Fatalf("release: %+v, %v", released, err)
	}
	// The replay: the kept records in order, the first two dead-lettered
	// unmarked, the others parked again.
	replayed := slices.Clone(wantLetters)
	for k, l := range wantLetters[2:] {
		replayed = append(replayed, letter{l.n, k >= 2})
	}
	slices.SortFunc(replayed, func(a, b letter) int { return a.n - b.n })
	waitFor(t, "the replayed dead letters", func() bool { return len(deadLetters(t, p.js, "DLQ")) >= len(replayed) })
	settle()
	check("after the release", replayed, len(poison)-4)

	p.stop()
	p.start()
	waitFor(t, "the job running again", func() bool { return running(t, p.m, id) && p.info(id).State == StateRunning })
	settle()
	check("after a restart after the release", replayed, len(poison)-4)
}
