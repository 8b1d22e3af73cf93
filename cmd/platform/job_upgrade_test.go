package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"wasmstream.io/platform/internal/wasmbuild"
)

// renamedDedup is udfs/dedup-wat with its state "seen" declared as "mark".
func renamedDedup(t *testing.T) []byte {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "dedup-wat")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"Makefile", "dedup-wat.wat"} {
		data, err := os.ReadFile(filepath.Join(wasmbuild.Root(), "udfs", "dedup-wat", name))
		if err != nil {
			t.Fatal(err)
		}
		data = []byte(strings.ReplaceAll(string(data), `\"name\":\"seen\"`, `\"name\":\"mark\"`))
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return wasmbuild.Dir(t, dir)
}

// TestCLIUpgradeAndRescale drives upgrade, rescale and versions against a
// running keyed job: a renamed state is refused naming it, an upgrade and
// a rescale each wait until their version is committed, and versions lists
// them.
func TestCLIUpgradeAndRescale(t *testing.T) {
	ts := startTestServer(t)
	ts.stream("IN", []string{"in"}, [][]byte{[]byte(`{"user":"a"}`), []byte(`{"user":"b"}`), []byte(`{"user":"a"}`)})
	ts.stream("OUT", []string{"out"}, nil)
	v1 := ts.upload(wasmbuild.UDF(t, "dedup-wat"))
	v2 := ts.upload(wasmbuild.UDF(t, "dedup-c"))
	renamed := ts.upload(renamedDedup(t))
	job := ts.submit(fmt.Sprintf(`
name: live
checkpoint: {interval: 50ms}
sources: [{id: in, jetstream: {stream: IN, subjects: [in]}}]
operators: [{id: dedup, input: in, key_by: {field: user}, process: {module: "%s", function: dedup}}]
sinks: [{id: out, input: dedup, jetstream: {subject: out}}]
`, v1))
	ts.waitFor("the first outputs", func() bool { return len(ts.read("OUT")) == 2 })
	tests := []struct {
		args    []string
		want    string // a regular expression of the output
		wantErr string
	}{
		{args: []string{"job", "upgrade", job, "--module", renamed}, wantErr: `Invalid job (400):
  operators[0].process: the new module declares no state "seen" (a value state of the running module, renamed or removed): its state would be lost; to rename or retype it, declare it retired and convert it in a migrate_state function (line 5)`},
		{args: []string{"job", "upgrade", job}, wantErr: "Invalid job (400):\n  module: give the new module, a new spec, or both"},
		{args: []string{"job", "upgrade", job, "--module", v2, "--probation-time", "100ms"}, want: `^job ` + job + ` runs version 2 \(from checkpoint \d+\)\n$`},
		{args: []string{"job", "rescale", job, "--operator", "dedup=x"}, wantErr: `--operator "dedup=x": want ID=N`},
		{args: []string{"job", "rescale", job, "--parallelism", "2", "--operator", "out=1"}, want: `^job ` + job + ` runs version 3 \(from checkpoint \d+\)\n$`},
		{args: []string{"job", "versions", job}, want: `^VERSION +CHANGE +OUTCOME +MODULES +PARALLELISM +FROM +STARTED +REASON\n` +
			`1 +submitted +replaced +` + v1 + ` +dedup=1,in=1,out=1 +0 +\S+ *\n` +
			`2 +upgrade +replaced +` + v2 + ` +dedup=1,in=1,out=1 +\d+ +\S+ *\n` +
			`3 +rescale +running +` + v2 + ` +dedup=2,in=1,out=1 +\d+ +\S+ *\n$`},
	}
	for _, tc := range tests {
		out, _, err := runCLIWith(context.Background(), "", append(tc.args, "--server", ts.base)...)
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		if gotErr != tc.wantErr || tc.want != "" && !regexp.MustCompile(tc.want).MatchString(out) {
			t.Errorf("platform %s:\n%s\nerror %q, want %q and error %q", strings.Join(tc.args, " "), out, gotErr, tc.want, tc.wantErr)
		}
	}
	// The job's keyed state went through both switches: the keys seen
	// before are not emitted again.
	ts.publish("in", [][]byte{[]byte(`{"user":"a"}`), []byte(`{"user":"c"}`), []byte(`{"user":"b"}`)})
	var at int64
	ts.waitFor("the records in the new version", func() bool {
		info := ts.job(job)
		for _, v := range info.Vertices {
			if v.ID == "dedup" && v.RecordsIn == 3 && info.Checkpoint.Latest != nil {
				at = info.Checkpoint.Latest.ID
				return true
			}
		}
		return false
	})
	ts.waitFor("a checkpoint after them", func() bool { return ts.job(job).Checkpoint.Latest.ID > at+1 })
	if got := len(ts.read("OUT")); got != 3 {
		t.Fatalf("%d outputs, want 3", got)
	}
}

// TestCLICanary drives a canary through the CLI: a range that splits a
// subtask is refused naming canary.key_groups, a canary rolled back and
// one promoted each wait until their version runs, promote and rollback
// without a canary are conflicts, and versions lists the canaries.
func TestCLICanary(t *testing.T) {
	ts := startTestServer(t)
	ts.stream("IN", []string{"in"}, [][]byte{[]byte(`{"user":"a"}`), []byte(`{"user":"b"}`)})
	ts.stream("OUT", []string{"out"}, nil)
	v1 := ts.upload(wasmbuild.UDF(t, "dedup-c"))
	v2 := ts.upload(wasmbuild.UDF(t, "dedup-v2"))
	job := ts.submit(fmt.Sprintf(`
name: canary
max_parallelism: 4
checkpoint: {interval: 50ms}
sources: [{id: in, jetstream: {stream: IN, subjects: [in]}}]
operators: [{id: dedup, input: in, parallelism: 2, key_by: {field: user}, process: {module: "%s", function: dedup}}]
sinks: [{id: out, input: dedup, jetstream: {subject: out}}]
`, v1))
	ts.waitFor("the first outputs", func() bool { return len(ts.read("OUT")) == 2 })
	tests := []struct {
		args    []string
		want    string // a regular expression of the output
		wantErr string
	}{
		{args: []string{"job", "upgrade", job, "--module", v2, "--canary", "0-0"}, wantErr: `Invalid job (400):
  canary.key_groups: 0-0 splits subtask 0 of "dedup" (key groups 0-1): a canary covers whole subtasks; "dedup"'s are 0-1, 2-3`},
		{args: []string{"job", "promote", job}, wantErr: "Job runs no canary (409): job " + job + ": the job runs no canary (platform job upgrade --canary starts one)"},
		{args: []string{"job", "upgrade", job, "--module", v2, "--canary", "2-3", "--probation-time", "100ms"}, want: `^job ` + job + ` runs version 2 \(from checkpoint \d+\)\n$`},
		{args: []string{"job", "upgrade", job, "--module", v2}, wantErr: "Job is switching versions (409): job " + job + ": the job is switching versions: it runs a canary on key groups 2-3; promote it or roll it back first"},
		{args: []string{"job", "rollback", job}, want: `^job ` + job + ` runs version 3 \(from checkpoint \d+\)\n$`},
		{args: []string{"job", "rollback", job}, wantErr: "Job runs no canary (409): job " + job + ": the job runs no canary (platform job upgrade --canary starts one)"},
		{args: []string{"job", "upgrade", job, "--module", v2, "--canary", "0-1", "--probation-time", "100ms"}, want: `^job ` + job + ` runs version 4 \(from checkpoint \d+\)\n$`},
		{args: []string{"job", "promote", job, "--probation-time", "100ms"}, want: `^job ` + job + ` runs version 5 \(from checkpoint \d+\)\n$`},
		{args: []string{"job", "versions", job}, want: `^VERSION +CHANGE +OUTCOME +MODULES +PARALLELISM +FROM +STARTED +REASON\n` +
			`1 +submitted +replaced +` + v1 + ` +dedup=2,in=1,out=1 +0 +\S+ *\n` +
			`2 +canary +replaced +` + v1 + `\+canary\[2-3\]:` + v2 + ` +dedup=2,in=1,out=1 +\d+ +\S+ *\n` +
			`3 +rollback +replaced +` + v1 + ` +dedup=2,in=1,out=1 +\d+ +\S+ *\n` +
			`4 +canary +replaced +` + v1 + `\+canary\[0-1\]:` + v2 + ` +dedup=2,in=1,out=1 +\d+ +\S+ *\n` +
			`5 +promote +running +` + v2 + ` +dedup=2,in=1,out=1 +\d+ +\S+ *\n$`},
	}
	for _, tc := range tests {
		out, _, err := runCLIWith(context.Background(), "", append(tc.args, "--server", ts.base)...)
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		if gotErr != tc.wantErr || tc.want != "" && !regexp.MustCompile(tc.want).MatchString(out) {
			t.Errorf("platform %s:\n%s\nerror %q, want %q and error %q", strings.Join(tc.args, " "), out, gotErr, tc.want, tc.wantErr)
		}
	}
}
