package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/internal/wasmbuild"
	"wasmstream.io/platform/runtime"
)

// upgradeKeys is the number of keys of TestKillNineDuringUpgrade; the
// first half of them are published before the upgrade, all of them after.
const upgradeKeys = 2000

// keyedRecords are perKey records of keys from..to-1 at timestamp ts.
func keyedRecords(from, to, perKey int, ts int64) [][]byte {
	var out [][]byte
	for r := 0; r < perKey; r++ {
		for k := from; k < to; k++ {
			out = append(out, fmt.Appendf(nil, `{"user":"k%04d","ts":%d,"r":%d}`, k, ts, r))
		}
	}
	return out
}

// TestKillNineDuringUpgrade SIGKILLs a platform process while a keyed job
// (a dedup process function and a window count) switches from one module
// to another, at each phase of the switch: right after the request, while
// the new version is on probation, and after it committed. The restarted
// process runs exactly one version (a version on probation is rolled back,
// a committed one kept), and the output is exactly once: every key's first
// record once, every key's window counting every record.
func TestKillNineDuringUpgrade(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills platform processes")
	}
	bin := buildPlatform(t)
	tests := []struct {
		name      string
		probation runtime.Probation
		// before waits for the phase to kill in.
		before func(c *child, job string)
		// runs is the module the job must end on: "v1", "v2", or "" for
		// either (the kill may come before or after the barrier).
		runs string
	}{
		{"at the request", runtime.Probation{Records: 1 << 40, Time: "1h"}, func(*child, string) {}, ""},
		{"on probation", runtime.Probation{Records: 1 << 40, Time: "1h"}, func(c *child, job string) {
			c.waitVersions(job, runtime.VersionReplaced, runtime.VersionProbation)
		}, "v1"},
		{"committed", runtime.Probation{Records: 1, Time: "1s"}, func(c *child, job string) {
			c.waitVersions(job, runtime.VersionReplaced, runtime.VersionRunning)
		}, "v2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &child{t: t, bin: bin, dir: t.TempDir(), http: fmt.Sprintf("127.0.0.1:%d", freePort(t)), natsPort: freePort(t)}
			t.Cleanup(c.stop)
			c.start()
			js, closeNATS := c.connect()
			ctx := context.Background()
			upgradeStreams(t, js, 1)
			mods := map[string]string{"v1": c.upload(wasmbuild.UDF(t, "dedup-wat")).ID, "v2": c.upload(wasmbuild.UDF(t, "dedup-c")).ID}
			in := func(int) string { return "in" }
			publishAll(t, js, keyedRecords(0, upgradeKeys/2, 10, 1000), in)
			job := c.submit(fmt.Sprintf(upgradeKillJob, mods["v1"]))
			waitStreamOutputs(t, c, js, job, "FIRSTS", upgradeKeys/2)
			req, err := json.Marshal(runtime.UpgradeRequest{Module: mods["v2"], Probation: tc.probation})
			if err != nil {
				t.Fatal(err)
			}
			if status, body := c.call(http.MethodPost, "/v1/jobs/"+job+"/upgrade", "application/json", req); status != http.StatusAccepted {
				t.Fatalf("upgrade: %d %s", status, body)
			}
			tc.before(c, job)
			// Input for the new version, published as the process dies.
			publishAll(t, js, keyedRecords(0, upgradeKeys, 10, 2000), in)
			closeNATS()
			c.kill()
			c.start()
			js, closeNATS = c.connect()
			defer closeNATS()
			if _, err := js.Publish(ctx, "in", []byte(`{"user":"clock","ts":36000000}`)); err != nil {
				t.Fatal(err)
			}
			waitStreamOutputs(t, c, js, job, "FIRSTS", upgradeKeys+1)
			waitStreamOutputs(t, c, js, job, "WINDOWS", upgradeKeys)
			if status, body := c.call(http.MethodPost, "/v1/jobs/"+job+"/cancel", "", nil); status != http.StatusOK {
				t.Fatalf("cancel: %d %s", status, body)
			}

			checkOneVersion(t, c.job(job), mods[tc.runs])
			checkUpgradeOutputs(t, js)
		})
	}
}

// upgradeStreams creates the streams of upgradeKillJob with replicas.
func upgradeStreams(t *testing.T, js jetstream.JetStream, replicas int) {
	t.Helper()
	for _, s := range []jetstream.StreamConfig{
		{Name: "IN", Subjects: []string{"in"}, Storage: jetstream.FileStorage, Replicas: replicas},
		{Name: "FIRSTS", Subjects: []string{"firsts"}, Storage: jetstream.FileStorage, Replicas: replicas},
		{Name: "WINDOWS", Subjects: []string{"windows"}, Storage: jetstream.FileStorage, Replicas: replicas},
	} {
		if _, err := js.CreateStream(context.Background(), s); err != nil {
			t.Fatal(err)
		}
	}
}

// upgradeKillJob is a keyed job of a dedup process function (its module
// the argument) and a window count over the same keys.
const upgradeKillJob = `
name: upgrade-kill9
parallelism: 2
checkpoint: {interval: 100ms, mode: exactly_once}
restart: {strategy: fixed_delay, delay: 100ms}
sources: [{id: in, parallelism: 1, jetstream: {stream: IN, subjects: [in]}, timestamp: {field: ts},
  watermark: {strategy: bounded_out_of_orderness, max_out_of_orderness: 0s, interval: 0s}}]
operators:
  - {id: dedup, input: in, key_by: {field: user}, process: {module: "%s", function: dedup}}
  - {id: counts, input: in, key_by: {field: user}, window: {type: tumbling, size: 1h}, aggregate: {builtin: count}}
sinks:
  - {id: firsts, input: dedup, jetstream: {subject: firsts}}
  - {id: windows, input: counts, jetstream: {subject: windows}}
`

// checkOneVersion fails unless exactly one version of the job runs, the
// last, on module (any module when empty).
func checkOneVersion(t *testing.T, info runtime.JobInfo, module string) {
	t.Helper()
	last := info.Versions[len(info.Versions)-1]
	for _, v := range info.Versions[:len(info.Versions)-1] {
		if v.Outcome == runtime.VersionRunning || v.Outcome == runtime.VersionProbation {
			t.Fatalf("versions %+v: more than one version runs", info.Versions)
		}
	}
	if last.Outcome != runtime.VersionRunning || info.Modules[0].ID != last.Modules[0].ID ||
		module != "" && last.Modules[0].ID != module {
		t.Fatalf("job runs %+v, versions %+v, want %s", info.Modules, info.Versions, module)
	}
}

// checkUpgradeOutputs checks upgradeKillJob's output (on subjects firsts
// and windows) after the first half
// of upgradeKeys were published at ts 1000 and all of them at ts 2000:
// every key's first record once, and every key's window counting each of
// its records once.
func checkUpgradeOutputs(t *testing.T, js jetstream.JetStream) {
	t.Helper()
	seen := map[string]int{}
	for _, p := range readSubject(t, js, "FIRSTS", "firsts") {
		var r struct{ User string }
		if err := json.Unmarshal(p, &r); err != nil {
			t.Fatalf("FIRSTS: %q: %v", p, err)
		}
		seen[r.User]++
	}
	counts := map[string]int{}
	for _, p := range readSubject(t, js, "WINDOWS", "windows") {
		var w struct {
			Key   string `json:"key"`
			Value int    `json:"value"`
		}
		if err := json.Unmarshal(p, &w); err != nil {
			t.Fatalf("WINDOWS: %q: %v", p, err)
		}
		counts[w.Key] += w.Value
	}
	var bad []string
	for k := 0; k < upgradeKeys; k++ {
		key, want := fmt.Sprintf("k%04d", k), 10
		if k < upgradeKeys/2 {
			want = 20
		}
		if seen[key] != 1 || counts[key] != want {
			bad = append(bad, fmt.Sprintf("%s: first %d times, window %d (want %d)", key, seen[key], counts[key], want))
		}
	}
	if len(seen) != upgradeKeys+1 || len(counts) != upgradeKeys || len(bad) > 0 {
		t.Fatalf("%d keys first, %d windows, want %d and %d: %s", len(seen), len(counts), upgradeKeys+1, upgradeKeys, strings.Join(bad[:min(len(bad), 10)], "; "))
	}
}

// waitStreamOutputs waits until stream name holds n messages on its subject
// (name in lower case; in cluster mode the stream holds the sinks' fences
// too), failing if the job ends.
func waitStreamOutputs(t *testing.T, c *child, js jetstream.JetStream, job, name string, n uint64) {
	t.Helper()
	subject := strings.ToLower(name)
	for deadline := time.Now().Add(2 * time.Minute); subjectCount(t, js, name, subject) < n; time.Sleep(50 * time.Millisecond) {
		if info := c.job(job); info.State.Terminal() || time.Now().After(deadline) {
			t.Fatalf("job %s (%s) with %d of %d messages in %s; versions %+v\n%s", info.State, info.Failure, subjectCount(t, js, name, subject), n, name, info.Versions, c.logText())
		}
	}
}

// waitVersions waits until the job's versions have these outcomes.
func (c *child) waitVersions(job string, outcomes ...string) {
	c.t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		info := c.job(job)
		got := make([]string, len(info.Versions))
		for i, v := range info.Versions {
			got[i] = v.Outcome
		}
		if strings.Join(got, ",") == strings.Join(outcomes, ",") {
			return
		}
		if info.State.Terminal() || time.Now().After(deadline) {
			c.t.Fatalf("job %s (%s): versions %v, want %v", info.State, info.Failure, got, outcomes)
		}
	}
}
