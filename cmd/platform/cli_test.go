package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"wasmstream.io/platform/internal/wasmbuild"
)

// cliRun is one command line and what it must print: stdout with the ids
// and times replaced (see normalise), and the error, "" for none.
type cliRun struct {
	args    []string
	stdin   string
	want    string
	wantErr string
}

// runCLIWith runs the platform command with args, stdin as its input and
// ctx as its context, and returns its stdout, stderr and error.
func runCLIWith(ctx context.Context, stdin string, args ...string) (string, string, error) {
	var out, errOut bytes.Buffer
	root := newRootCommand()
	root.SetArgs(args)
	root.SetIn(strings.NewReader(stdin))
	root.SetOut(&out)
	root.SetErr(&errOut)
	err := root.ExecuteContext(ctx)
	return out.String(), errOut.String(), err
}

var (
	stampRE  = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`)
	blanksRE = regexp.MustCompile(`  +`)
)

// normalise replaces each value of names (an id, a size) with its key,
// RFC 3339 times with TIME, and, since the ids' lengths vary, the blanks
// between columns with two spaces.
func normalise(s string, names map[string]string) string {
	for k, v := range names {
		if v != "" {
			s = strings.ReplaceAll(s, v, k)
		}
	}
	s = stampRE.ReplaceAllString(s, "TIME")
	return blanksRE.ReplaceAllString(s, "  ")
}

// check runs each command line against the server with --server and
// compares its normalised output and error.
func (ts *testServer) check(names map[string]string, runs []cliRun) {
	ts.t.Helper()
	for _, r := range runs {
		args := append(r.args, "--server", ts.base)
		out, _, err := runCLIWith(context.Background(), r.stdin, args...)
		gotErr := ""
		if err != nil {
			gotErr = normalise(err.Error(), names)
		}
		if got := normalise(out, names); got != r.want || gotErr != r.wantErr {
			ts.t.Errorf("platform %s:\ngot:\n%s\nerror: %q\nwant:\n%s\nerror: %q", strings.Join(r.args, " "), got, gotErr, r.want, r.wantErr)
		}
	}
}

// idOf runs a command with -o id and returns the id it prints.
func (ts *testServer) idOf(args ...string) string {
	ts.t.Helper()
	out, _, err := runCLIWith(context.Background(), "", append(args, "-o", "id", "--server", ts.base)...)
	if err != nil {
		ts.t.Fatalf("platform %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(out)
}

const cliJobSpec = `name: words
parallelism: 2
checkpoint: {interval: 1h, mode: exactly_once}
sources:
  - id: lines
    jetstream: {stream: TEXT, subjects: ["text.>"]}
operators:
  - id: split
    input: lines
    flat_map: {module: "%s", function: split}
sinks:
  - id: out
    input: split
    jetstream: {subject: words}
`

// TestCLIJobs drives a platform with the module and job commands: push a
// module built from udfs/wordcount, submit a job, read its output, list and
// get it, take a savepoint, stop it, resume it, cancel it, and the error
// answers on the way.
func TestCLIJobs(t *testing.T) {
	ts := startTestServer(t)
	dir := t.TempDir()
	wasm := wasmbuild.UDF(t, "wordcount")
	wasmFile := filepath.Join(dir, "wordcount.wasm")
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	write("wordcount.wasm", string(wasm))
	notWasm := write("not.wasm", "hello")
	ts.stream("TEXT", []string{"text.>"}, nil)
	ts.stream("WORDS", []string{"words"}, nil)
	names := map[string]string{"DIR": dir, "SIZE": strconv.Itoa(len(wasm))}

	mod := ts.idOf("module", "push", wasmFile)
	names["MOD"] = mod
	spec := write("job.yaml", fmt.Sprintf(cliJobSpec, mod))
	ts.check(names, []cliRun{
		{args: []string{"module", "push", wasmFile}, want: "id:  MOD\nsize:  SIZE\nuploaded:  TIME\nfunctions:  split (flat_map), word (key), count (window_process)\n"},
		{args: []string{"module", "push", notWasm}, wantErr: "Invalid module (400):\n  not a valid module: invalid magic number"},
		{args: []string{"module", "push", filepath.Join(dir, "missing.wasm")}, wantErr: "open DIR/missing.wasm: no such file or directory"},
		{args: []string{"job", "submit", "-"}, stdin: "name: x\nparallelism: two\n", wantErr: "Invalid job spec (400):\n" +
			"  parallelism: want an integer, got a string (line 2)\n  sources: at least one source is required\n  sinks: at least one sink is required"},
		{args: []string{"job", "get", "nope"}, wantErr: "Not found (404): job nope: not found"},
		{args: []string{"job", "list", "-o", "yaml"}, wantErr: `--output: "yaml" is not table, json or id`},
	})

	job := ts.idOf("job", "submit", spec)
	names["JOB1"] = job
	ts.waitFor("the job to run", func() bool { return ts.job(job).State == "RUNNING" })
	out, _, err := runCLIWith(context.Background(), "", "pub", "text.en", "Hello streaming world", "--nats", ts.s.embedded.ClientURL())
	if err != nil || out != "published to text.en: stream TEXT, sequence 1\n" {
		t.Fatalf("pub: %q %v", out, err)
	}
	// The exactly-once sink commits when a checkpoint completes: the
	// savepoint is one.
	ts.check(names, []cliRun{
		{args: []string{"job", "savepoint", job}, want: "savepoint JOB1-1 COMPLETED\n"},
		{args: []string{"job", "savepoints", job, "-o", "id"}, want: "JOB1-1\n"},
		{args: []string{"job", "checkpoints", job, "-o", "id"}, want: "1\n"},
	})
	ts.waitFor("the output", func() bool { return len(ts.read("WORDS")) == 3 })
	ts.check(names, []cliRun{
		{args: []string{"module", "list"}, want: "ID  NAMES  SIZE  FUNCTIONS  USED BY\nMOD  SIZE  split (flat_map), word (key), count (window_process)  JOB1\n"},
		{args: []string{"module", "rm", mod}, wantErr: "Module in use (409): module MOD is used by jobs JOB1: in use"},
		{args: []string{"job", "list"}, want: "ID  NAME  STATE  CREATED\nJOB1  words  RUNNING  TIME\n"},
		{args: []string{"job", "get", job}, want: `id:  JOB1
name:  words
state:  RUNNING
created:  TIME
checkpoints:  exactly_once, 1 completed, 0 failed, latest 1 at TIME

VERTEX  KIND  PARALLELISM  TASK  IN  OUT  UDF ERRORS  BACKPRESSURE  WATERMARK
lines  source  1  lines  1  1  0  0.00  -
split  flat_map  2  split  1  3  0  0.00  -
out  sink  2  split  3  3  0  0.00  -
`},
		{args: []string{"job", "stop", job}, want: "job JOB1 FINISHED with savepoint JOB1-2\n"},
		{args: []string{"job", "cancel", job}, wantErr: "Job already finished (409): job already finished"},
	})

	out, _, err = runCLIWith(context.Background(), "", "job", "resume", job, spec, "--server", ts.base)
	m := regexp.MustCompile(`^submitted job ([0-9a-f]{16}) \((CREATED|RUNNING)\) from savepoint ` + job + `-2\n$`).FindStringSubmatch(out)
	if err != nil || m == nil {
		t.Fatalf("resume: %q %v", out, err)
	}
	job2 := m[1]
	names["JOB2"] = job2
	ts.waitFor("the resumed job to run", func() bool { return ts.job(job2).State == "RUNNING" })
	// watch redraws until Ctrl-C (here: its context).
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	out, _, err = runCLIWith(ctx, "", "job", "watch", job2, "--interval", "200ms", "--server", ts.base)
	frames := strings.Split(out, "\n\n")
	if err != nil || len(frames) < 2 || !strings.HasPrefix(frames[0], "job "+job2+" (words) RUNNING\nVERTEX  PARALLELISM  IN  IN/S  OUT  OUT/S  WATERMARK  BACKPRESSURE\nlines ") {
		t.Errorf("watch: %q %v", out, err)
	}
	_, body := ts.call(http.MethodGet, "/v1/jobs/"+job2, "", nil)
	ts.check(names, []cliRun{
		{args: []string{"job", "get", job2, "-o", "json"}, want: normalise(string(body), names)},
		{args: []string{"job", "cancel", job2}, want: "job JOB2 CANCELED\n"},
		{args: []string{"job", "watch", job2}, want: "job JOB2 (words) CANCELED\nVERTEX  PARALLELISM  IN  IN/S  OUT  OUT/S  WATERMARK  BACKPRESSURE\n" +
			"lines  1  0  -  0  -  -  OK 0.00\nsplit  2  0  -  0  -  -  OK 0.00\nout  2  0  -  0  -  -  OK 0.00\n"},
		{args: []string{"job", "resume", job2, spec}, wantErr: "job JOB2 has no completed savepoint: take one with platform job savepoint JOB2 (or stop it)"},
		{args: []string{"job", "submit", spec, "--from-savepoint", job + "-9"}, wantErr: "Invalid job (400):\n  from_savepoint: JOB1-9: no such savepoint"},
		{args: []string{"job", "list", "-o", "id"}, want: "JOB1\nJOB2\n"},
		{args: []string{"module", "rm", mod}, want: "deleted module MOD\n"},
		{args: []string{"module", "list"}, want: "ID  NAMES  SIZE  FUNCTIONS  USED BY\n"},
	})
}

// TestCLIServerAndToken: the server and token come from flags, the
// environment or a config file, and the answers to a missing token and an
// unreachable server say what is wrong.
func TestCLIServerAndToken(t *testing.T) {
	ts := startTestServerWith(t, config{HTTPAddr: "127.0.0.1:0", DataDir: t.TempDir(), NATSPort: -1, Token: "s3cret", LogFormat: "text", LogLevel: "warn"})
	t.Setenv("PLATFORM_SERVER", "")
	t.Setenv("PLATFORM_API_TOKEN", "")
	ts.check(nil, []cliRun{
		{args: []string{"job", "list"}, wantErr: "Unauthorized (401): missing bearer token: send Authorization: Bearer <token>"},
		{args: []string{"job", "list", "--token", "wrong"}, wantErr: "Unauthorized (401): invalid bearer token"},
		{args: []string{"job", "list", "--token", "s3cret"}, want: "ID  NAME  STATE  CREATED\n"},
	})

	file := filepath.Join(t.TempDir(), "client.yaml")
	if err := os.WriteFile(file, []byte("server: "+ts.base+"\napi:\n  token: s3cret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(filepath.Dir(file), "missing.yaml")
	down := "http://127.0.0.1:1"
	for _, tc := range []struct {
		name    string
		env     map[string]string
		args    []string
		want    string
		wantErr string
	}{
		{name: "config file", args: []string{"--config", file}, want: "ID  NAME  STATE  CREATED\n"},
		{name: "env over file", env: map[string]string{"PLATFORM_API_TOKEN": "wrong"}, args: []string{"--config", file},
			wantErr: "Unauthorized (401): invalid bearer token"},
		{name: "env", env: map[string]string{"PLATFORM_SERVER": ts.base, "PLATFORM_API_TOKEN": "s3cret"}, want: "ID  NAME  STATE  CREATED\n"},
		{name: "flag over env", env: map[string]string{"PLATFORM_SERVER": ts.base, "PLATFORM_API_TOKEN": "s3cret"}, args: []string{"--server", down},
			wantErr: "cannot reach the platform at " + down + " (set --server or PLATFORM_SERVER): dial tcp 127.0.0.1:1: connect: connection refused"},
		{name: "missing config file", args: []string{"--config", missing},
			wantErr: "config file " + missing + ": open " + missing + ": no such file or directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			out, _, err := runCLIWith(context.Background(), "", append([]string{"job", "list"}, tc.args...)...)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if out != tc.want || gotErr != tc.wantErr {
				t.Errorf("got %q, error %q; want %q, error %q", out, gotErr, tc.want, tc.wantErr)
			}
		})
	}
}

// TestCLIStreams creates and lists streams, publishes and subscribes
// through the embedded NATS server.
func TestCLIStreams(t *testing.T) {
	ts := startTestServer(t)
	url := ts.s.embedded.ClientURL()
	for _, r := range []cliRun{
		{args: []string{"stream", "add", "TEXT", "--subjects", "text.>"}, want: "stream TEXT: subjects text.>\n"},
		{args: []string{"stream", "add", "WORDS", "--subjects", "words,more.words"}, want: "stream WORDS: subjects words, more.words\n"},
		{args: []string{"pub", "text.en", "one"}, want: "published to text.en: stream TEXT, sequence 1\n"},
		{args: []string{"pub", "text.de", "two"}, want: "published to text.de: stream TEXT, sequence 2\n"},
		{args: []string{"pub", "nowhere", "x"}, want: "published to nowhere (no stream captures it)\n"},
		{args: []string{"stream", "ls"}, want: "NAME              SUBJECTS             MESSAGES  BYTES\n" +
			"KV_PLATFORM_JOBS  $KV.PLATFORM_JOBS.>  0         0\nTEXT              text.>               2         80\nWORDS             words,more.words     0         0\n"},
		{args: []string{"sub", "text.>", "--all", "--count", "2"}, want: "one\ntwo\n"},
		{args: []string{"sub", "text.de", "--all", "--count", "1"}, want: "two\n"},
		{args: []string{"sub", "nowhere", "--all"}, wantErr: "--all: no stream captures nowhere: nats: API error: code=404 err_code=10059 description=stream not found"},
	} {
		out, _, err := runCLIWith(context.Background(), "", append(r.args, "--nats", url)...)
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		if out != r.want || gotErr != r.wantErr {
			t.Errorf("platform %s:\ngot %q, error %q\nwant %q, error %q", strings.Join(r.args, " "), out, gotErr, r.want, r.wantErr)
		}
	}

	// sub without --all sees what is published once it subscribed: publish
	// until it has seen --count messages.
	done := make(chan string)
	go func() {
		out, _, err := runCLIWith(context.Background(), "", "sub", "live.*", "--count", "2", "--nats", url)
		done <- fmt.Sprintf("%q %v", out, err)
	}()
	var got string
	for got == "" {
		if _, _, err := runCLIWith(context.Background(), "", "pub", "live.x", "tick", "--nats", url); err != nil {
			t.Fatal(err)
		}
		select {
		case got = <-done:
		case <-time.After(50 * time.Millisecond):
		}
	}
	if got != `"tick\ntick\n" <nil>` {
		t.Errorf("sub live.* --count 2: %s", got)
	}
	// Ctrl-C (here: the context) ends it without an error.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if out, _, err := runCLIWith(ctx, "", "sub", "quiet", "--nats", url); out != "" || err != nil {
		t.Errorf("sub quiet: %q %v", out, err)
	}

	if _, _, err := runCLIWith(context.Background(), "", "stream", "ls", "--nats", "nats://127.0.0.1:1"); err == nil ||
		err.Error() != "cannot reach NATS at nats://127.0.0.1:1 (set --nats): nats: no servers available for connection" {
		t.Errorf("NATS down: %v", err)
	}
}
