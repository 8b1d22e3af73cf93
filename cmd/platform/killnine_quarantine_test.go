package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/internal/wasmbuild"
	"wasmstream.io/platform/runtime"
	"wasmstream.io/platform/runtime/operator"
)

// TestKillNineQuarantine runs an exactly-once job whose keyed map rejects
// every record of the key "poison" under on_udf_error: {policy: quarantine,
// after: 2} in a separate platform process, and SIGKILLs the process twice
// while it runs. The good records are each on the sink stream once, the
// poison ones each on the dead-letter stream once (the first two unmarked,
// the others marked parked), and the parked list holds every parked record.
// A release replays them once: killed after it committed, the job replays
// nothing again.
func TestKillNineQuarantine(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills platform processes")
	}
	c, js, closeNATS := startChild(t)
	defer func() { closeNATS() }()
	createStreams(t, js,
		jetstream.StreamConfig{Name: "IN", Subjects: []string{"in"}, Storage: jetstream.FileStorage},
		jetstream.StreamConfig{Name: "OUT", Subjects: []string{"out"}, Storage: jetstream.FileStorage},
		jetstream.StreamConfig{Name: "DLQ", Subjects: []string{"dlq"}, Storage: jetstream.FileStorage},
	)
	const n = 1500
	poison := func(i int) bool { return i%10 == 7 }
	var poisoned []int
	for i := range n {
		m := nats.NewMsg("in")
		m.Header.Set("Seq", strconv.Itoa(i))
		m.Data = []byte("r" + strconv.Itoa(i))
		if poison(i) {
			m.Data = []byte("poison")
			poisoned = append(poisoned, i)
		}
		if _, err := js.PublishMsgAsync(m); err != nil {
			t.Fatal(err)
		}
	}
	awaitPublished(t, js)
	good := uint64(n - len(poisoned))
	kinds, faulty := c.upload(wasmbuild.UDF(t, "kinds")), c.upload(wasmbuild.UDF(t, "faulty-wat"))
	jobID := c.submit(fmt.Sprintf(`
name: quarantine9
checkpoint: {interval: 200ms, mode: exactly_once}
restart: {strategy: fixed_delay, delay: 100ms}
on_udf_error: {policy: quarantine, after: 2}
dead_letter_subject: dlq
udf: {batch_size: 16}
sources: [{id: in, jetstream: {stream: IN}}]
operators: [{id: m, input: in, parallelism: 2, key_by: {module: %s, function: by_value}, map: {module: %s, function: reject}}]
sinks: [{id: out, input: m, jetstream: {subject: out}, throttle: 500}]
`, kinds.ID, faulty.ID))

	waitUntil := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(2 * time.Minute); !cond(); time.Sleep(50 * time.Millisecond) {
			if info := c.job(jobID); info.State.Terminal() || time.Now().After(deadline) {
				t.Fatalf("waiting for %s: job %s %s\n%s", what, info.State, info.Failure, c.log)
			}
		}
	}
	restart := func() {
		closeNATS()
		c.kill()
		c.start()
		js, closeNATS = c.connect()
	}
	for _, at := range []uint64{good / 3, 2 * good / 3} {
		waitUntil(fmt.Sprintf("%d outputs", at), func() bool { return outputs(t, js, "OUT") >= at })
		restart()
	}
	settled := func() {
		t.Helper()
		waitUntil("the job running", func() bool { return c.job(jobID).State == runtime.StateRunning })
		at := c.job(jobID).Checkpoint.Completed
		waitUntil("two more checkpoints", func() bool { return c.job(jobID).Checkpoint.Completed >= at+2 })
	}
	quarantined := func() []runtime.QuarantinedKey {
		t.Helper()
		status, body := c.call(http.MethodGet, "/v1/jobs/"+jobID+"/quarantine", "", nil)
		var l struct{ Keys []runtime.QuarantinedKey }
		if err := json.Unmarshal(body, &l); status != http.StatusOK || err != nil {
			t.Fatalf("quarantine: %d %s", status, body)
		}
		return l.Keys
	}
	// check compares the streams with the expected: each good record on
	// the sink stream once; the dead letters, in order of their input,
	// each with its parked mark.
	check := func(stage string, letters []string, kept int) {
		t.Helper()
		ts := &testServer{t: t, js: js}
		out := ts.read("OUT")
		seen := map[string]bool{}
		for _, m := range out {
			if seen[string(m.Data())] {
				t.Fatalf("%s: %s on the sink stream twice", stage, m.Data())
			}
			seen[string(m.Data())] = true
		}
		if uint64(len(seen)) != good {
			t.Fatalf("%s: %d good records out, want %d", stage, len(seen), good)
		}
		var got []string
		for _, m := range ts.read("DLQ") {
			got = append(got, m.Headers().Get("Seq")+":"+m.Headers().Get(operator.HeaderQuarantine))
		}
		if !slices.Equal(got, letters) {
			t.Fatalf("%s: dead letters\n%v\nwant\n%v", stage, got, letters)
		}
		keys := quarantined()
		if len(keys) != 1 || keys[0].Key != "poison" || keys[0].Kept != kept || keys[0].Failures != 2 {
			t.Fatalf("%s: quarantined %+v, want poison with %d kept", stage, keys, kept)
		}
	}
	var letters []string
	for k, i := range poisoned {
		mark := ""
		if k >= 1 {
			mark = "parked"
		}
		letters = append(letters, strconv.Itoa(i)+":"+mark)
	}
	waitUntil("every record", func() bool {
		return outputs(t, js, "OUT") >= good && outputs(t, js, "DLQ") >= uint64(len(letters))
	})
	settled()
	check("after two kills", letters, len(poisoned)-1)

	status, body := c.call(http.MethodPost, "/v1/jobs/"+jobID+"/quarantine/poison/release", "", nil)
	if status != http.StatusAccepted {
		t.Fatalf("release: %d %s", status, body)
	}
	// The replay: the kept records in order, the first dead-lettered
	// unmarked, the others parked again.
	for k, i := range poisoned[1:] {
		mark := ""
		if k >= 1 {
			mark = "parked"
		}
		letters = append(letters, strconv.Itoa(i)+":"+mark)
	}
	waitUntil("the replay's dead letters", func() bool { return outputs(t, js, "DLQ") >= uint64(len(letters)) })
	restart()
	settled()
	check("killed after the release", letters, len(poisoned)-2)
}
