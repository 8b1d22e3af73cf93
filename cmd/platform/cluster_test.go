package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/connector"
	"wasmstream.io/platform/internal/wasmbuild"
	"wasmstream.io/platform/runtime"
)

var clusterBench = flag.Bool("cluster-bench", false, "measure failover: time from kill -9 to output resuming")

// testCluster is three NATS nodes and the platform workers on them.
type testCluster struct {
	t       *testing.T
	bin     string
	nats    *natsCluster
	workers []*child
	timeout time.Duration
}

func newTestCluster(t *testing.T, workers int, timeout time.Duration) *testCluster {
	t.Helper()
	if testing.Short() {
		t.Skip("starts NATS nodes and platform processes")
	}
	tc := &testCluster{t: t, bin: buildPlatform(t), nats: startNATSCluster(t, 3), timeout: timeout}
	for i := range workers {
		tc.add(i)
	}
	for _, w := range tc.workers {
		w.start()
	}
	return tc
}

// add makes worker i (w<i+1>), not started.
func (tc *testCluster) add(i int) *child {
	w := &child{t: tc.t, bin: tc.bin, dir: tc.t.TempDir(), http: fmt.Sprintf("127.0.0.1:%d", freePort(tc.t)),
		args: []string{"--nats.url", tc.nats.URLs(), "--cluster.worker_id", "w" + strconv.Itoa(i+1),
			"--cluster.worker_timeout", tc.timeout.String(), "--nats.replicas", "3"}}
	tc.t.Cleanup(w.stop)
	tc.workers = append(tc.workers, w)
	return w
}

// connect opens a client on the NATS cluster.
func (tc *testCluster) connect() (jetstream.JetStream, func()) {
	tc.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nc, js, err := connector.Connect(ctx, tc.nats.URLs(), "cluster-test")
	if err != nil {
		tc.t.Fatal(err)
	}
	return js, nc.Close
}

// alive is a worker whose process runs.
func (tc *testCluster) alive() *child {
	for _, w := range tc.workers {
		if w.cmd != nil && w.cmd.ProcessState == nil && !w.stopped {
			return w
		}
	}
	tc.t.Fatal("no worker is running")
	return nil
}

// owner is the worker a job runs on, as the cluster says, waiting for one
// while the job moves.
func (tc *testCluster) owner(job string) *child {
	tc.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		info := tc.alive().job(job)
		for _, w := range tc.workers {
			if info.Worker == "w"+strconv.Itoa(tc.index(w)+1) && info.State == runtime.StateRunning && w.cmd.ProcessState == nil && !w.stopped {
				return w
			}
		}
		if info.State.Terminal() || time.Now().After(deadline) {
			tc.t.Fatalf("job %s on %q: %s %s", job, info.Worker, info.State, info.Failure)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (tc *testCluster) index(w *child) int {
	for i, x := range tc.workers {
		if x == w {
			return i
		}
	}
	return -1
}

// waitFinished waits until the job is FINISHED, asking any live worker.
func (tc *testCluster) waitFinished(job string) {
	tc.t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		info := tc.alive().job(job)
		if info.State == runtime.StateFinished {
			return
		}
		if info.State.Terminal() || time.Now().After(deadline) {
			tc.t.Fatalf("job %s: %s %s", job, info.State, info.Failure)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// subjectCount is the number of messages on subject in stream.
func subjectCount(t *testing.T, js jetstream.JetStream, stream, subject string) uint64 {
	t.Helper()
	// Tried again for a while: just after a worker, and its NATS node,
	// was killed or restarted, the stream's leader can be moving and
	// JetStream's API can answer nothing for a moment.
	deadline := time.Now().Add(30 * time.Second)
	for {
		n, err := subjectCountOnce(js, stream, subject)
		if err == nil {
			return n
		}
		if time.Now().After(deadline) {
			t.Fatalf("stream %s: %v", stream, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// subjectCountOnce is one try of subjectCount.
func subjectCountOnce(js jetstream.JetStream, stream, subject string) (uint64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, stream)
	if err != nil {
		return 0, err
	}
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(subject))
	if err != nil {
		return 0, err
	}
	return info.State.Subjects[subject], nil
}

// readSubject returns the payloads of every message on subject in stream,
// each stream message once.
func readSubject(t *testing.T, js jetstream.JetStream, stream, subject string) [][]byte {
	t.Helper()
	return payloadsOf(readStream(t, js, stream, subject))
}

// seqInput creates R3 streams IN and OUT and publishes keys*perKey seqcheck
// records into IN. OUT de-duplicates over dedup (JetStream's default when
// zero).
func seqInput(t *testing.T, js jetstream.JetStream, keys, perKey int, dedup time.Duration) {
	t.Helper()
	ctx := context.Background()
	for _, s := range []jetstream.StreamConfig{
		{Name: "IN", Subjects: []string{"in.>"}, Storage: jetstream.FileStorage, Replicas: 3},
		{Name: "OUT", Subjects: []string{"out"}, Storage: jetstream.FileStorage, Replicas: 3, Duplicates: dedup},
	} {
		if _, err := js.CreateStream(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	payloads, subject := seqRecords(keys, perKey, 4, "in")
	publishAll(t, js, payloads, subject)
}

const clusterSeqJob = `
name: cluster-seq
parallelism: 2
checkpoint: {interval: 200ms, mode: exactly_once}
restart: {strategy: fixed_delay, delay: 100ms}
sources: [{id: in, jetstream: {stream: IN, subjects: ["in.0", "in.1", "in.2", "in.3"], bounded: true}}]
operators: [{id: track, input: in, key_by: {field: k}, process: {module: %s, function: track}}]
sinks: [{id: out, input: track, jetstream: {subject: out}, throttle: 2500}]
`

// awaitOutput waits until subject out of OUT holds at least n messages.
func awaitOutput(t *testing.T, js jetstream.JetStream, n uint64) uint64 {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		got := subjectCount(t, js, "OUT", "out")
		if got >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("output stuck at %d, want %d", got, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestClusterKillNine: three workers on three NATS nodes run a keyed
// exactly-once job; the worker running it is killed (kill -9) four times at
// random points, each time restarted as a new worker; the job moves to a
// live worker each time, and the output is exact: 0 lost, 0 duplicated,
// per-key order kept.
func TestClusterKillNine(t *testing.T) {
	timeout := time.Second
	tc := newTestCluster(t, 3, timeout)
	js, closeNATS := tc.connect()
	defer closeNATS()
	const keys, perKey = 500, 100
	const total = keys * perKey
	seqInput(t, js, keys, perKey, 0)
	mod := tc.workers[0].upload(wasmbuild.UDF(t, "seqcheck"))
	job := tc.workers[0].submit(fmt.Sprintf(clusterSeqJob, mod.ID))

	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 0))
	const kills = 4
	for k := range kills {
		target := total*uint64(k+1)/(kills+2) + rng.Uint64N(total/(kills+2)/2)
		awaitOutput(t, js, target)
		w := tc.owner(job)
		at := subjectCount(t, js, "OUT", "out")
		w.kill()
		killed := time.Now()
		// Output resumes once the job runs on a live worker again: the
		// first output after the new owner started, beyond what the
		// killed worker's last commit still stored.
		next := tc.owner(job)
		awaitOutput(t, js, subjectCount(t, js, "OUT", "out")+1)
		t.Logf("kill %d of %s at %d outputs: the job runs on %s, output resumed %s after the kill", k+1, w.args[3], at, next.args[3], time.Since(killed).Round(time.Millisecond))
		w.start()
	}
	tc.waitFinished(job)
	checkSequences(t, readSubject(t, js, "OUT", "out"), keys, perKey)
}

// TestClusterZombie: the worker running an exactly-once job is paused
// (SIGSTOP) past its lease, another takes the job over, and the paused one
// is resumed (SIGCONT) while the job still runs: it stops the job at once,
// and nothing it still had to commit reaches the sink.
func TestClusterZombie(t *testing.T) {
	timeout := time.Second
	tc := newTestCluster(t, 3, timeout)
	js, closeNATS := tc.connect()
	defer closeNATS()
	const keys, perKey = 500, 100
	const total = keys * perKey
	// A de-duplication window shorter than the pause: the zombie's
	// commits after it resumes are not dropped as duplicates; only the
	// sink's fence keeps them out.
	seqInput(t, js, keys, perKey, time.Second)
	mod := tc.workers[0].upload(wasmbuild.UDF(t, "seqcheck"))
	job := tc.workers[0].submit(fmt.Sprintf(clusterSeqJob, mod.ID))
	for _, at := range []uint64{total / 5, total / 2} {
		awaitOutput(t, js, at)
		z := tc.owner(job)
		// Pause it as a commit begins to land, so that it is paused
		// mid-commit.
		for n := subjectCount(t, js, "OUT", "out"); subjectCount(t, js, "OUT", "out") == n; {
		}
		z.stopped = true
		if err := z.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		// The job moves; the zombie sleeps on past its lease.
		next := tc.owner(job)
		awaitOutput(t, js, subjectCount(t, js, "OUT", "out")+1000)
		time.Sleep(time.Second) // past the de-duplication window
		if err := z.cmd.Process.Signal(syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
		z.stopped = false
		t.Logf("job moved from %s to %s while the first was paused", z.args[3], next.args[3])
		waitLog(t, z, "lease lost")
	}
	tc.waitFinished(job)
	checkSequences(t, readSubject(t, js, "OUT", "out"), keys, perKey)
}

// waitLog waits until the worker's log has s.
func waitLog(t *testing.T, w *child, s string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(w.logText(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("%s never logged %q:\n%s", w.args[3], s, w.logText())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestClusterPlacementAndJoin: a job goes to the worker with the most free
// slots; a worker that joins takes the next job; workers started at once
// after the only one died run its job exactly once.
func TestClusterPlacementAndJoin(t *testing.T) {
	timeout := time.Second
	tc := newTestCluster(t, 1, timeout)
	js, closeNATS := tc.connect()
	defer closeNATS()
	const keys, perKey = 200, 100
	seqInput(t, js, keys, perKey, 0)
	mod := tc.workers[0].upload(wasmbuild.UDF(t, "seqcheck"))
	gen := "name: gen\ncheckpoint: {interval: 1s}\nsources: [{id: gen, generator: {kind: sequence, rate: 100}}]\nsinks: [{id: out, input: gen, discard: true}]\n"
	first := tc.workers[0].submit(gen)
	if w := tc.owner(first); w != tc.workers[0] {
		t.Fatalf("the first job runs on %s", w.args[3])
	}
	// w2 joins with every slot free: the next job, submitted through w1,
	// goes to it.
	w2 := tc.add(1)
	w2.start()
	waitWorkers(t, tc.workers[0], 2)
	second := tc.workers[0].submit(gen)
	if w := tc.owner(second); w != w2 {
		t.Fatalf("the job submitted after w2 joined runs on %s, want w2", w.args[3])
	}
	// Savepoints and cancellation work through a worker that does not
	// run the job: w1 forwards them to w2.
	if status, body := tc.workers[0].call(http.MethodPost, "/v1/jobs/"+second+"/savepoints", "", nil); status != http.StatusAccepted {
		t.Fatalf("savepoint through w1: %d %s", status, body)
	}
	waitChildSavepoint(t, tc.workers[0], second)
	if status, body := tc.workers[0].call(http.MethodPost, "/v1/jobs/"+second+"/cancel", "", nil); status != http.StatusOK {
		t.Fatalf("cancel through w1: %d %s", status, body)
	}
	if info := tc.workers[0].job(second); info.State != runtime.StateCanceled {
		t.Fatalf("after cancel through w1: %s", info.State)
	}
	// Every worker dies; then three start at once. The exactly-once job
	// they find runs on one of them only, and its output is exact.
	job := w2.submit(fmt.Sprintf(clusterSeqJob, mod.ID))
	tc.owner(job)
	for _, w := range tc.workers {
		w.kill()
	}
	tc.add(2)
	done := make(chan struct{})
	for _, w := range tc.workers {
		go func() { w.start(); done <- struct{}{} }()
	}
	for range tc.workers {
		<-done
	}
	for end := time.Now().Add(4 * timeout); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		runs := 0
		for _, wi := range workersOf(t, tc.alive()) {
			for _, j := range wi.Jobs {
				if j == job {
					runs++
				}
			}
		}
		if runs > 1 {
			t.Fatalf("job %s is held by %d workers at once", job, runs)
		}
	}
	tc.waitFinished(job)
	checkSequences(t, readSubject(t, js, "OUT", "out"), keys, perKey)
}

func workersOf(t *testing.T, w *child) []runtime.WorkerInfo {
	t.Helper()
	status, body := w.call(http.MethodGet, "/v1/workers", "", nil)
	if status != http.StatusOK {
		t.Fatalf("workers: %d %s", status, body)
	}
	var out struct {
		Workers []runtime.WorkerInfo `json:"workers"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatal(err)
	}
	return out.Workers
}

// waitWorkers waits until w lists n live workers.
func waitWorkers(t *testing.T, w *child, n int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		alive := 0
		for _, wi := range workersOf(t, w) {
			if wi.Alive {
				alive++
			}
		}
		if alive == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d live workers, want %d", alive, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitChildSavepoint waits until job has a completed savepoint, asking w.
func waitChildSavepoint(t *testing.T, w *child, job string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		status, body := w.call(http.MethodGet, "/v1/jobs/"+job+"/savepoints", "", nil)
		if status == http.StatusOK && strings.Contains(string(body), `"COMPLETED"`) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no completed savepoint of %s: %d %s", job, status, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
