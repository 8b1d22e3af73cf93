package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/connector"
	"wasmstream.io/platform/internal/wasmbuild"
	"wasmstream.io/platform/runtime"
)

// child is a platform serve process on fixed ports and a data directory.
type child struct {
	t        *testing.T
	bin, dir string
	http     string
	// natsPort is the embedded NATS server's client port; 0 leaves the flag
	// out (a process with nats.url runs no server).
	natsPort int
	// args are more flags for serve.
	args []string
	// wrap, if set, is a command that runs the platform: its first word is
	// the program, the platform and its arguments follow the rest
	// (taskset -c 0, for example).
	wrap []string
	cmd  *exec.Cmd
	log  *lockedBuffer
	// stopped: the test paused the process (SIGSTOP).
	stopped bool
}

// lockedBuffer is a process's output, read while the process writes it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// logText is what the process has written so far.
func (c *child) logText() string { return c.log.String() }

// publishAll publishes payloads[i] on subject(i), acknowledged, with at most
// 10,000 unacknowledged at a time. A publish refused because too many are
// outstanding (acknowledgements slow on a loaded machine) waits for them
// and goes again.
func publishAll(t *testing.T, js jetstream.JetStream, payloads [][]byte, subject func(i int) string) {
	t.Helper()
	for i, p := range payloads {
		for {
			_, err := js.PublishAsync(subject(i), p)
			if err == nil {
				break
			}
			if !errors.Is(err, jetstream.ErrTooManyStalledMsgs) {
				t.Fatal(err)
			}
			awaitPublished(t, js)
		}
		if i%10000 == 9999 {
			awaitPublished(t, js)
		}
	}
	awaitPublished(t, js)
}

// awaitPublished waits until every async publish is acknowledged.
func awaitPublished(t *testing.T, js jetstream.JetStream) {
	t.Helper()
	select {
	case <-js.PublishAsyncComplete():
	case <-time.After(time.Minute):
		t.Fatal("publishing timed out")
	}
}

// startChild starts a platform process on a new data directory and free
// ports, stopped when the test ends, and connects to its NATS server.
func startChild(t *testing.T) (*child, jetstream.JetStream, func()) {
	t.Helper()
	c := &child{t: t, bin: buildPlatform(t), dir: t.TempDir(), http: fmt.Sprintf("127.0.0.1:%d", freePort(t)), natsPort: freePort(t)}
	t.Cleanup(c.stop)
	c.start()
	js, closeNATS := c.connect()
	return c, js, closeNATS
}

// createStreams creates the streams of configs.
func createStreams(t *testing.T, js jetstream.JetStream, configs ...jetstream.StreamConfig) {
	t.Helper()
	for _, s := range configs {
		if _, err := js.CreateStream(context.Background(), s); err != nil {
			t.Fatal(err)
		}
	}
}

// freePort asks the kernel for a free loopback port.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// buildPlatform builds the platform binary into a temporary directory.
func buildPlatform(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "platform")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = filepath.Join(wasmbuild.Root(), "cmd", "platform")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// start runs the process and waits until its API is ready.
func (c *child) start() {
	c.t.Helper()
	c.log = &lockedBuffer{}
	args := []string{"serve", "--data_dir", c.dir, "--http.addr", c.http, "--log.level", "warn"}
	if c.natsPort != 0 {
		args = append(args, "--nats.port", strconv.Itoa(c.natsPort))
	}
	args = append(args, c.args...)
	if len(c.wrap) > 0 {
		args = append(append(c.wrap[1:len(c.wrap):len(c.wrap)], c.bin), args...)
		c.cmd = exec.Command(c.wrap[0], args...)
	} else {
		c.cmd = exec.Command(c.bin, args...)
	}
	c.cmd.Stdout, c.cmd.Stderr = c.log, c.log
	if err := c.cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		resp, err := http.Get("http://" + c.http + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("platform not ready after a minute:\n%s", c.log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// kill sends SIGKILL and reaps the process.
func (c *child) kill() {
	c.t.Helper()
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		c.t.Fatal(err)
	}
	_ = c.cmd.Wait()
}

// stop ends the process gracefully.
func (c *child) stop() {
	if c.cmd == nil || c.cmd.ProcessState != nil {
		return
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = c.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		_ = c.cmd.Process.Kill()
		<-done
	}
}

func (c *child) call(method, path, contentType string, body []byte) (int, []byte) {
	c.t.Helper()
	req, err := http.NewRequest(method, "http://"+c.http+path, bytes.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	return resp.StatusCode, data
}

// upload pushes a module to the child and returns it.
func (c *child) upload(wasm []byte) runtime.ModuleInfo {
	c.t.Helper()
	status, body := c.call(http.MethodPost, "/v1/modules", "application/wasm", wasm)
	if status != http.StatusCreated {
		c.t.Fatalf("upload: %d %s", status, body)
	}
	var mod runtime.ModuleInfo
	if err := json.Unmarshal(body, &mod); err != nil {
		c.t.Fatal(err)
	}
	return mod
}

// submit submits a YAML job spec to the child and returns the job's id.
func (c *child) submit(spec string) string {
	c.t.Helper()
	status, body := c.call(http.MethodPost, "/v1/jobs", "application/yaml", []byte(spec))
	if status != http.StatusCreated {
		c.t.Fatalf("submit: %d %s", status, body)
	}
	var job runtime.JobInfo
	if err := json.Unmarshal(body, &job); err != nil {
		c.t.Fatal(err)
	}
	return job.ID
}

func (c *child) job(id string) runtime.JobInfo {
	c.t.Helper()
	status, body := c.call(http.MethodGet, "/v1/jobs/"+id, "", nil)
	if status != http.StatusOK {
		c.t.Fatalf("get job: %d %s", status, body)
	}
	var info runtime.JobInfo
	if err := json.Unmarshal(body, &info); err != nil {
		c.t.Fatal(err)
	}
	return info
}

// connect opens a NATS client on the child's embedded server.
func (c *child) connect() (jetstream.JetStream, func()) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nc, js, err := connector.Connect(ctx, fmt.Sprintf("nats://127.0.0.1:%d", c.natsPort), "kill9-test")
	if err != nil {
		c.t.Fatal(err)
	}
	return js, nc.Close
}

// outputs is the number of messages in stream name.
func outputs(t *testing.T, js jetstream.JetStream, name string) uint64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Msgs
}

// killAtRandom SIGKILLs the child kills times at random points of the job's
// progress, measured as the messages in the sink stream out against the
// total expected, restarting it on the same data directory each time, then
// waits until the job finishes. It returns the connection it ends with.
func (c *child) killAtRandom(job, out string, total uint64, kills int, js jetstream.JetStream, closeNATS func()) (jetstream.JetStream, func()) {
	t := c.t
	t.Helper()
	// Kill points: random output counts spread over the first three
	// quarters of the run, so that each kill hits a different phase
	// (restoring, committing, mid-epoch). Not later: a sink's output grows
	// by a whole epoch at a commit, and the last epochs of a bounded job
	// can take it from a late kill point to the end at once, the job
	// finishing before its last kill.
	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	t.Logf("seed %d", seed)
	span := total * 3 / 4
	for k := 0; k < kills; k++ {
		target := span * uint64(k) / uint64(kills)
		if k > 0 {
			target += rng.Uint64N(span / uint64(kills) / 2)
		}
		deadline := time.Now().Add(time.Minute)
		n := outputs(t, js, out)
		for ; n < target && time.Now().Before(deadline); n = outputs(t, js, out) {
			time.Sleep(time.Duration(rng.IntN(20)) * time.Millisecond)
		}
		if info := c.job(job); info.State.Terminal() {
			t.Fatalf("job %s before kill %d: %s", info.State, k+1, info.Failure)
		}
		closeNATS()
		c.kill()
		t.Logf("kill %d at %d outputs or more (target %d)", k+1, n, target)
		c.start()
		js, closeNATS = c.connect()
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		info := c.job(job)
		if info.State == runtime.StateFinished {
			return js, closeNATS
		}
		if info.State.Terminal() || time.Now().After(deadline) {
			closeNATS()
			t.Fatalf("job %s: %s\n%s", info.State, info.Failure, c.log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestKillNine runs a keyed exactly-once job (seqcheck: per-key sequence
// numbers, keyed state holding each key's last) over 200,000 records in a
// separate platform process, SIGKILLs the process at random points of its
// progress at least five times, and restarts it on the same data directory
// each time. After the job finishes, the sink stream holds every expected
// output exactly once: 0 lost, 0 duplicated, per-key order kept, and each
// output saw the previous record's state.
func TestKillNine(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills platform processes")
	}
	bin := buildPlatform(t)
	module := wasmbuild.UDF(t, "seqcheck")
	c := &child{t: t, bin: bin, dir: t.TempDir(), http: fmt.Sprintf("127.0.0.1:%d", freePort(t)), natsPort: freePort(t)}
	t.Cleanup(c.stop)
	c.start()

	js, closeNATS := c.connect()
	const keys, perKey = 1000, 200
	const total = keys * perKey
	payloads, subject := seqRecords(keys, perKey, 4, "in")
	ctx := context.Background()
	for _, s := range []jetstream.StreamConfig{
		{Name: "IN", Subjects: []string{"in.>"}, Storage: jetstream.FileStorage},
		{Name: "OUT", Subjects: []string{"out"}, Storage: jetstream.FileStorage},
	} {
		if _, err := js.CreateStream(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	publishAll(t, js, payloads, subject)

	mod := c.upload(module)
	jobID := c.submit(fmt.Sprintf(`
name: kill9
parallelism: 2
checkpoint: {interval: 200ms, mode: exactly_once}
restart: {strategy: fixed_delay, delay: 100ms}
sources: [{id: in, jetstream: {stream: IN, subjects: ["in.0", "in.1", "in.2", "in.3"], bounded: true}}]
operators: [{id: track, input: in, key_by: {field: k}, process: {module: %s, function: track}}]
sinks: [{id: out, input: track, jetstream: {subject: out}}]
`, mod.ID))

	js, closeNATS = c.killAtRandom(jobID, "OUT", total, 6, js, closeNATS)
	defer closeNATS()
	ts := &testServer{t: t, js: js}
	checkSequences(t, payloadsOf(ts.read("OUT")), keys, perKey)
}
