package runtime

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/runtime/spec"
)

// A core NATS source feeds a job (parallelism 2: its subtasks share the
// messages as a queue group, each read once); a core NATS sink fans them
// out again with the key and timestamp headers.
func TestNATSSourceAndSinkJob(t *testing.T) {
	m, js := newJetStreamManager(t)
	ctx := context.Background()
	nc := js.Conn()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "OUT", Subjects: []string{"out"}}); err != nil {
		t.Fatal(err)
	}
	fan, err := nc.SubscribeSync("fan")
	if err != nil {
		t.Fatal(err)
	}
	info, err := m.SubmitJob(ctx, []byte(`
name: core
parallelism: 2
sources: [{id: in, nats: {subject: "in.>"}}]
sinks:
  - {id: out, input: in, jetstream: {subject: out}}
  - {id: fan, input: in, parallelism: 1, nats: {subject: fan}}
`))
	if err != nil {
		t.Fatal(err)
	}
	// Probes until the subscriptions are in place: core NATS delivers
	// only to subscribers.
	waitFor(t, "the source to subscribe", func() bool {
		if err := nc.Publish("in.probe", []byte("probe")); err != nil {
			t.Fatal(err)
		}
		return len(streamValues(t, js, "OUT")) > 0
	})
	time.Sleep(100 * time.Millisecond)
	for i := range 100 {
		if err := nc.Publish(fmt.Sprintf("in.%d", i%3), fmt.Appendf(nil, "m%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	var want []string
	for i := range 100 {
		want = append(want, fmt.Sprintf("m%d", i))
	}
	read := func() []string {
		var got []string
		for _, v := range streamValues(t, js, "OUT") {
			if v != "probe" {
				got = append(got, v)
			}
		}
		slices.Sort(got)
		return got
	}
	waitFor(t, "100 messages out", func() bool { return len(read()) >= 100 })
	time.Sleep(100 * time.Millisecond)
	slices.Sort(want)
	if got := read(); !slices.Equal(got, want) {
		t.Fatalf("output %v, want each message once", got)
	}
	var fanned []string
	for {
		msg, err := fan.NextMsg(2 * time.Second)
		if err != nil {
			break
		}
		if string(msg.Data) == "probe" {
			continue
		}
		if msg.Header.Get("Platform-Timestamp") == "" || msg.Header.Values("Platform-Key") == nil {
			t.Fatalf("fanned out message without key and timestamp headers: %v", msg.Header)
		}
		fanned = append(fanned, string(msg.Data))
	}
	slices.Sort(fanned)
	if !slices.Equal(fanned, want) {
		t.Fatalf("fanned out %d messages, want %d", len(fanned), len(want))
	}
	if _, err := m.CancelJob(ctx, info.ID); err != nil {
		t.Fatal(err)
	}
}

// Core NATS in an exactly-once job is refused unless allowed, naming the
// field; allowed, the job runs.
func TestNATSRefusedInExactlyOnceJob(t *testing.T) {
	m, js := newJetStreamManager(t)
	ctx := context.Background()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "OUT", Subjects: []string{"out"}}); err != nil {
		t.Fatal(err)
	}
	job := `
name: eo
checkpoint: {interval: 100ms}
sources: [{id: in, nats: {subject: in%s}}]
sinks: [{id: out, input: in, jetstream: {subject: out}}]
`
	_, err := m.SubmitJob(ctx, fmt.Appendf(nil, job, ""))
	var se *spec.Error
	if !errors.As(err, &se) || len(se.Problems) != 1 || se.Problems[0].Path != "sources[0].nats" ||
		!strings.Contains(se.Problems[0].Message, "allow_at_most_once: true") {
		t.Fatalf("got %v, want a problem at sources[0].nats", err)
	}
	info, err := m.SubmitJob(ctx, fmt.Appendf(nil, job, ", allow_at_most_once: true"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.CancelJob(ctx, info.ID); err != nil {
		t.Fatal(err)
	}
}
