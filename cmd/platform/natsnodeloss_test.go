package main

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/internal/wasmbuild"
	"wasmstream.io/platform/runtime"
)

// The platform's own buckets, as JetStream names their streams.
const (
	registryStream   = "KV_PLATFORM_JOBS"
	checkpointStream = "OBJ_" + checkpointBucket
)

// streamMsgs is the number of messages in stream name, or an error while
// the cluster cannot say (a stream leader being elected).
func streamMsgs(js jetstream.JetStream, name string) (uint64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, name)
	if err != nil {
		return 0, err
	}
	info, err := st.Info(ctx)
	if err != nil {
		return 0, err
	}
	return info.State.Msgs, nil
}

// waitOutputs waits until stream name holds at least n messages or the job
// has finished, for at most two minutes; a job that ends otherwise fails
// the test.
func waitOutputs(t *testing.T, c *child, job string, js jetstream.JetStream, name string, n uint64) uint64 {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	var last string
	for {
		got, err := streamMsgs(js, name)
		if err == nil && got >= n {
			return got
		}
		if err != nil && err.Error() != last {
			last = err.Error()
			t.Logf("stream %s: %v", name, err)
		}
		info := c.job(job)
		if info.State == runtime.StateFinished {
			return got
		}
		if info.State.Terminal() {
			t.Fatalf("job %s: %s\n%s", info.State, info.Failure, c.log)
		}
		if time.Now().After(deadline) {
			t.Fatalf("stream %s: %d messages (%v) after two minutes, want %d", name, got, err, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// nodeToKill picks the NATS node to SIGKILL: the one the platform's
// connection is on, unless it holds one of the platform's own buckets with
// a single replica (whose loss the platform cannot survive), else another
// node without such a bucket.
func nodeToKill(t *testing.T, cluster *natsCluster, js jetstream.JetStream) int {
	t.Helper()
	single := map[int]string{}
	for _, name := range []string{registryStream, checkpointStream} {
		nodes, replicas := cluster.placement(js, name)
		t.Logf("stream %s: %d replica(s) on nodes %v", name, replicas, nodes)
		if replicas == 1 {
			single[nodes[0]] = name
		}
	}
	conn := cluster.connectedTo("platform")
	t.Logf("the platform is connected to node %d", conn)
	if _, ok := single[conn]; conn >= 0 && !ok {
		return conn
	}
	for i := range cluster.nodes {
		if _, ok := single[i]; !ok {
			t.Logf("node %d rather than the platform's node %d, which holds %s with one replica", i, conn, single[conn])
			return i
		}
	}
	t.Fatalf("every node holds a single-replica platform bucket: %v", single)
	return -1
}

// TestNATSNodeLossMidJob runs an exactly-once keyed job (seqcheck, as in
// TestKillNine) in a platform process on a three-node NATS cluster, with
// R3 source and sink streams and checkpoints in JetStream, SIGKILLs one
// NATS node a quarter of the way through the output, lets the job commit
// more output without it, starts the node again on its ports and store,
// and waits for the job to finish. The sink holds every expected
// output exactly once: 0 lost, 0 duplicated, per-key order and state kept.
//
// The registry and checkpoint buckets the platform creates have one
// replica today (nats.replicas is not applied to them yet), so the node
// killed is the platform's own unless that one holds either bucket; the
// test logs which.
func TestNATSNodeLossMidJob(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a platform and runs NATS server processes")
	}
	cluster := startNATSCluster(t, 3)
	js, closeNATS := cluster.connect()
	defer closeNATS()
	cluster.createStream(js, "IN", "in.>")
	cluster.createStream(js, "OUT", "out")
	const keys, perKey = 100, 200
	const total = keys * perKey
	payloads, subject := seqRecords(keys, perKey, 4, "in")
	publishAll(t, js, payloads, subject)
	if n, err := streamMsgs(js, "IN"); err != nil || n != total {
		t.Fatalf("stream IN: %d messages (%v), want %d", n, err, total)
	}

	c := &child{t: t, bin: buildPlatform(t), dir: t.TempDir(), http: fmt.Sprintf("127.0.0.1:%d", freePort(t)), natsPort: freePort(t),
		args: []string{"--nats.url", cluster.URLs(), "--nats.replicas", "3"}}
	t.Cleanup(c.stop)
	c.start()
	mod := c.upload(wasmbuild.UDF(t, "seqcheck"))
	// The throttle stretches the run over about twenty seconds, so that the
	// node is lost while checkpoints are taken and outputs committed.
	job := c.submit(fmt.Sprintf(`
name: nodeloss
parallelism: 2
checkpoint: {interval: 200ms, mode: exactly_once}
restart: {strategy: fixed_delay, delay: 100ms}
sources: [{id: in, jetstream: {stream: IN, subjects: ["in.0", "in.1", "in.2", "in.3"], bounded: true}}]
operators: [{id: track, input: in, key_by: {field: k}, process: {module: %s, function: track}}]
sinks: [{id: out, input: track, jetstream: {subject: out}, throttle: 1000}]
`, mod.ID))

	at := waitOutputs(t, c, job, js, "OUT", total/4)
	victim := nodeToKill(t, cluster, js)
	if info := c.job(job); info.State != runtime.StateRunning {
		t.Fatalf("job %s before the node loss (%d outputs): %s", info.State, at, info.Failure)
	}
	cluster.Kill(victim)
	t.Logf("killed node %d at %d outputs", victim, at)
	// The sink commits its outputs checkpoint by checkpoint: more of them
	// is a checkpoint committed without the node.
	at = waitOutputs(t, c, job, js, "OUT", at+1)
	cluster.Restart(victim)
	t.Logf("restarted node %d at %d outputs, the job %s", victim, at, c.job(job).State)
	cluster.waitCurrent(js, "IN", "OUT")

	deadline := time.Now().Add(3 * time.Minute)
	var info runtime.JobInfo
	for info = c.job(job); !info.State.Terminal(); info = c.job(job) {
		if time.Now().After(deadline) {
			t.Fatalf("job still %s after three minutes\n%s", info.State, c.log)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if info.State != runtime.StateFinished {
		t.Fatalf("job %s: %s\n%s", info.State, info.Failure, c.log)
	}
	t.Logf("job finished after %d restart(s)", info.Restarts)
	cluster.waitCurrent(js, "OUT")
	checkSequences(t, readSubject(t, js, "OUT", "out"), keys, perKey)
	if nodes, _ := cluster.placement(js, "OUT"); !slices.Contains(nodes, victim) {
		t.Errorf("stream OUT is on nodes %v after the restart, not on node %d again", nodes, victim)
	}
}
