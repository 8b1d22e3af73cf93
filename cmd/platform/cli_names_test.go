package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"wasmstream.io/platform/internal/wasmbuild"
)

const cliNamedSpec = `name: named
checkpoint: {interval: 1h}
sources: [{id: gen, generator: {kind: sequence, rate: 1000}}]
operators: [{id: up, input: gen, map: {module: %s, function: upper}}]
sinks: [{id: out, input: up, discard: true}]
`

// TestCLIModuleNamesAndJobRm: module push --name makes versions, a job
// names its module by name, job spec prints the spec as submitted, and job
// rm deletes an ended job, its savepoints kept unless --savepoints.
func TestCLIModuleNamesAndJobRm(t *testing.T) {
	ts := startTestServer(t)
	dir := t.TempDir()
	v1 := wasmbuild.UDF(t, "upper-wat")
	// The same functions under another hash: a custom section appended.
	v2 := append(append(slices.Clone(v1), 0, 4), 2, 'v', '2', '.')
	write := func(name string, content []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, content, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	v1File, v2File := write("v1.wasm", v1), write("v2.wasm", v2)
	names := map[string]string{"DIR": dir, "SIZE1": strconv.Itoa(len(v1)), "SIZE2": strconv.Itoa(len(v2))}
	names["MOD1"] = ts.idOf("module", "push", v1File, "--name", "upper")
	ts.check(names, []cliRun{
		{args: []string{"module", "push", v1File, "--name", "upper"}, want: "id:  MOD1\nversion:  upper@1\nnames:  upper@1\nsize:  SIZE1\nuploaded:  TIME\nfunctions:  upper (map)\n"},
		{args: []string{"module", "push", v1File, "--name", "Upper"}, wantErr: "Invalid request (400):\n" +
			"  name: invalid module name \"Upper\": want a lowercase letter or digit, then at most 62 lowercase letters, digits, '_' or '-'"},
		{args: []string{"module", "push", v1File, "--name", ""}, wantErr: "Invalid request (400):\n" +
			"  name: invalid module name \"\": want a lowercase letter or digit, then at most 62 lowercase letters, digits, '_' or '-'"},
	})
	names["MOD2"] = ts.idOf("module", "push", v2File, "--name", "upper")
	spec := write("job.yaml", fmt.Appendf(nil, cliNamedSpec, "upper"))
	job := ts.idOf("job", "submit", spec)
	names["JOB"] = job
	ts.waitFor("the job to run", func() bool { return ts.job(job).State == "RUNNING" })
	// The vertices' counts change as it runs.
	out, _, err := runCLIWith(context.Background(), "", "job", "get", job, "--server", ts.base)
	if want := "id:  JOB\nname:  named\nstate:  RUNNING\ncreated:  TIME\ncheckpoints:  exactly_once, 0 completed, 0 failed\nmodules:  upper = upper@2 (MOD2)\n\n"; err != nil || !strings.HasPrefix(normalise(out, names), want) {
		t.Errorf("job get: %q %v, want it to start with %q", normalise(out, names), err, want)
	}
	ts.check(names, []cliRun{
		{args: []string{"module", "list"}, want: "ID  NAMES  SIZE  FUNCTIONS  USED BY\nMOD1  upper@1  SIZE1  upper (map)\nMOD2  upper@2  SIZE2  upper (map)  JOB\n"},
		{args: []string{"module", "get", "upper"}, want: "id:  MOD2\nversion:  upper@2\nnames:  upper@2\nsize:  SIZE2\nuploaded:  TIME\nfunctions:  upper (map)\nused by:  JOB\n"},
		{args: []string{"module", "get", "upper@3"}, wantErr: "Not found (404): module upper@3: no such version: not found"},
		{args: []string{"job", "spec", job}, want: fmt.Sprintf(cliNamedSpec, "upper")},
		{args: []string{"job", "rm", job}, wantErr: "Job has not ended (409): job JOB is RUNNING; cancel or stop it first: job has not ended"},
		{args: []string{"module", "rm", "upper"}, wantErr: `Invalid request (400): invalid module name "upper": name a version to delete (upper@N; platform module list shows them) or the module's id`},
		{args: []string{"module", "rm", "upper@2"}, wantErr: "Module in use (409): module upper@2 is used by jobs JOB: in use"},
	})
	ts.waitFor("a savepoint of the job", func() bool {
		out, _, err := runCLIWith(context.Background(), "", "job", "savepoint", job, "--server", ts.base)
		return err == nil && out == "savepoint "+job+"-1 COMPLETED\n"
	})
	ts.check(names, []cliRun{
		{args: []string{"job", "stop", job}, want: "job JOB FINISHED with savepoint JOB-2\n"},
		{args: []string{"job", "rm", job}, want: "deleted job JOB and its checkpoints (savepoints kept)\n"},
		{args: []string{"job", "get", job}, wantErr: "Not found (404): job JOB: not found"},
		{args: []string{"job", "spec", job}, wantErr: "Not found (404): job JOB: not found"},
		{args: []string{"job", "savepoints", job, "-o", "id"}, want: "JOB-1\nJOB-2\n"},
		{args: []string{"job", "rm", job}, wantErr: "Not found (404): job JOB: not found"},
		{args: []string{"module", "rm", "upper@1"}, want: "deleted module upper@1\n"},
		{args: []string{"module", "list", "-o", "id"}, want: "MOD2\n"},
	})
	if status, body := ts.call(http.MethodDelete, "/v1/jobs/"+job+"/savepoints/"+job+"-1", "", nil); status != http.StatusNoContent {
		t.Fatalf("delete savepoint: %d %s", status, body)
	}
	ts.check(names, []cliRun{
		{args: []string{"job", "savepoints", job, "-o", "id"}, want: "JOB-2\n"},
	})

	// --savepoints deletes them too.
	job2 := ts.idOf("job", "submit", spec, "--from-savepoint", job+"-2")
	names["JOB2"] = job2
	ts.waitFor("the second job to run", func() bool { return ts.job(job2).State == "RUNNING" })
	// A restored job takes savepoints once its run has started.
	ts.waitFor("a savepoint of the second job", func() bool {
		out, _, err := runCLIWith(context.Background(), "", "job", "savepoint", job2, "--server", ts.base)
		return err == nil && out == "savepoint "+job2+"-1 COMPLETED\n"
	})
	ts.check(names, []cliRun{
		{args: []string{"job", "cancel", job2}, want: "job JOB2 CANCELED\n"},
		{args: []string{"job", "rm", job2, "--savepoints"}, want: "deleted job JOB2, its checkpoints and savepoints\n"},
		{args: []string{"job", "savepoints", job2}, wantErr: "Not found (404): job JOB2: not found"},
		{args: []string{"job", "list", "-o", "id"}, want: ""},
	})
}

// TestConfigJobRetention: jobs.retention defaults to a week, takes a
// duration from a flag or the environment, 0s keeps ended jobs, and a
// negative one is refused.
func TestConfigJobRetention(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  string
		want time.Duration
	}{
		{nil, "", 7 * 24 * time.Hour},
		{[]string{"--jobs.retention", "36h"}, "", 36 * time.Hour},
		{[]string{"--jobs.retention", "0s"}, "", 0},
		{nil, "90m", 90 * time.Minute},
	} {
		t.Setenv("PLATFORM_JOBS_RETENTION", tc.env)
		if tc.env == "" {
			if err := os.Unsetenv("PLATFORM_JOBS_RETENTION"); err != nil {
				t.Fatal(err)
			}
		}
		cfg, err := loadConfig(t, tc.args...)
		if err != nil || cfg.JobRetention != tc.want {
			t.Errorf("%v env %q: %v %v, want %v", tc.args, tc.env, cfg.JobRetention, err, tc.want)
		}
	}
	if _, err := loadConfig(t, "--jobs.retention", "-1h"); err == nil || err.Error() != "jobs.retention: -1h0m0s is negative; 0s keeps ended jobs" {
		t.Errorf("negative retention: %v", err)
	}
}
