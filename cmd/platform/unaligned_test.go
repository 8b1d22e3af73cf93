package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"wasmstream.io/platform/checkpoint"
	"wasmstream.io/platform/internal/wasmbuild"
	"wasmstream.io/platform/runtime"
)

// TestUnalignedCheckpointsAcrossARestart runs a keyed exactly-once job with
// unaligned checkpoints under backpressure (its sink throttled, so the
// exchange is full), sees its checkpoint history report in-flight bytes
// over the API, and stops the platform. The platform started again on the
// same data directory resumes the job from its latest checkpoint, whose
// in-flight data is in the store and must be replayed, and the output is
// every key's records exactly once, in order, with intact state.
func TestUnalignedCheckpointsAcrossARestart(t *testing.T) {
	dir := t.TempDir()
	ts := startTestServerIn(t, dir)
	mod := ts.upload(wasmbuild.UDF(t, "seqcheck"))
	const keys, perKey = 100, 300
	payloads, subject := seqRecords(keys, perKey, 4, "in")
	ts.publishBy("IN", []string{"in.>"}, payloads, subject)
	ts.stream("OUT", []string{"out"}, nil)
	id := ts.submit(fmt.Sprintf(`
name: unaligned
parallelism: 2
checkpoint: {interval: 100ms, mode: exactly_once, unaligned: true}
sources: [{id: in, jetstream: {stream: IN, subjects: ["in.>"], bounded: true}}]
operators: [{id: track, input: in, key_by: {field: k}, process: {module: %s, function: track}}]
sinks: [{id: out, input: track, jetstream: {subject: out}, throttle: 10000}]
`, mod))
	ts.waitFor("a checkpoint with in-flight data", func() bool {
		status, body := ts.call(http.MethodGet, "/v1/jobs/"+id+"/checkpoints", "", nil)
		var resp struct {
			Checkpoints []checkpoint.Stats `json:"checkpoints"`
		}
		if status != http.StatusOK || json.Unmarshal(body, &resp) != nil {
			t.Fatalf("checkpoints: %d %s", status, body)
		}
		for _, s := range resp.Checkpoints {
			if s.Status == checkpoint.StatusCompleted && s.InFlight > 0 {
				if s.Alignment != 0 || s.InFlight > s.Size {
					t.Fatalf("unaligned checkpoint %+v: want no alignment and in-flight bytes within its size", s)
				}
				return true
			}
		}
		return false
	})
	ts.stop()
	latest, err := checkpoint.Latest(context.Background(), checkpoint.NewDirStore(filepath.Join(dir, "checkpoints")), id)
	if err != nil {
		t.Fatal(err)
	}
	var inFlight []string
	for name := range latest.Blobs {
		if strings.HasPrefix(name, "inflight~") {
			inFlight = append(inFlight, name)
		}
	}
	if len(inFlight) == 0 {
		t.Fatalf("latest checkpoint %d holds no in-flight data: %v", latest.ID, latest.Blobs)
	}

	ts = startTestServerIn(t, dir)
	info := ts.wait(id)
	if info.State != runtime.StateFinished || info.Checkpoint == nil || info.Checkpoint.Restored == nil ||
		info.Checkpoint.Restored.Checkpoint != latest.ID {
		t.Fatalf("job %s %s, checkpoints %+v, want it restored from checkpoint %d", info.State, info.Failure, info.Checkpoint, latest.ID)
	}
	t.Logf("restored checkpoint %d with in-flight data %v", latest.ID, inFlight)
	checkSequences(t, payloadsOf(ts.read("OUT")), keys, perKey)
}
