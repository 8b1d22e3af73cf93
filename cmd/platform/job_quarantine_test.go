package main

import (
	"context"
	"fmt"
	"testing"

	"wasmstream.io/platform/internal/wasmbuild"
)

// TestCLIJobQuarantine: job quarantine list shows the key a keyed map
// parked, and release replays its kept records (still rejected: the first
// dead-lettered, the others parked again).
func TestCLIJobQuarantine(t *testing.T) {
	ts := startTestServer(t)
	kinds := ts.upload(wasmbuild.UDF(t, "kinds"))
	faulty := ts.upload(wasmbuild.UDF(t, "faulty-wat"))
	ts.stream("QIN", []string{"qin"}, [][]byte{[]byte("a"), []byte("poison"), []byte("b"), []byte("poison"), []byte("poison"), []byte("poison")})
	ts.stream("QDLQ", []string{"qdlq"}, nil)
	job := ts.submit(fmt.Sprintf(`name: parked
on_udf_error: {policy: quarantine, after: 2}
dead_letter_subject: qdlq
sources: [{id: in, jetstream: {stream: QIN}}]
operators: [{id: m, input: in, key_by: {module: %s, function: by_value}, map: {module: %s, function: reject}}]
sinks: [{id: out, input: m, discard: true}]
`, kinds, faulty))
	names := map[string]string{"JOB": job, "MOD": faulty}
	list := func(kept int) string {
		return fmt.Sprintf("OPERATOR  SUBTASK  KEY  FAILURES  PARKED  KEPT  OVERFLOW  FIRST ERROR\nm  0  poison  2  %d  %d  0  udf[MOD] function[reject]: rejected poison\n", kept, kept)
	}
	listed := func(want string) func() bool {
		return func() bool {
			out, _, err := runCLIWith(context.Background(), "", "job", "quarantine", "list", job, "--server", ts.base)
			return err == nil && normalise(out, names) == want
		}
	}
	ts.waitFor("the poison key parked", listed(list(3)))
	ts.check(names, []cliRun{
		{args: []string{"job", "quarantine", "release", job, "a"}, wantErr: `Not found (404): job JOB: key "a" is not quarantined: not found`},
		{args: []string{"job", "quarantine", "release", job, "poison"}, want: `key "poison" of m[0] released: 3 records replayed` + "\n"},
	})
	ts.waitFor("the poison key parked again", listed(list(2)))
}
