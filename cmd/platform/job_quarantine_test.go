package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
		return fmt.Sprintf("OPERATOR  SUBTASK  KEY  BASE64URL  FAILURES  PARKED  KEPT  OVERFLOW  FIRST ERROR\nm  0  poison  cG9pc29u  2  %d  %d  0  udf[MOD] function[reject]: rejected poison\n", kept, kept)
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

// binaryPoison is udfs/faulty-wat with the value its reject function
// refuses made 6 bytes that are not UTF-8 text: 0xff "poi" 0x00 "s".
func binaryPoison(t *testing.T) []byte {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "faulty-wat")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"Makefile", "faulty-wat.wat"} {
		data, err := os.ReadFile(filepath.Join(wasmbuild.Root(), "udfs", "faulty-wat", name))
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		if name == "faulty-wat.wat" {
			old := `(data (i32.const 192) "poison")`
			if !strings.Contains(text, old) {
				t.Fatalf("faulty-wat.wat has no %s", old)
			}
			text = strings.Replace(text, old, `(data (i32.const 192) "\ffpoi\00s")`, 1)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return wasmbuild.Dir(t, dir)
}

// TestCLIJobQuarantineBinaryKey: a parked key that is not UTF-8 text is
// listed quoted and in base64url, is not found by its text, and is
// released by its base64url with --base64.
func TestCLIJobQuarantineBinaryKey(t *testing.T) {
	ts := startTestServer(t)
	kinds := ts.upload(wasmbuild.UDF(t, "kinds"))
	faulty := ts.upload(binaryPoison(t))
	poison := []byte("\xffpoi\x00s")
	ts.stream("QIN", []string{"qin"}, [][]byte{[]byte("a"), poison, []byte("b"), poison, poison})
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
		return fmt.Sprintf("OPERATOR  SUBTASK  KEY  BASE64URL  FAILURES  PARKED  KEPT  OVERFLOW  FIRST ERROR\nm  0  \"\\xffpoi\\x00s\"  _3BvaQBz  2  %d  %d  0  udf[MOD] function[reject]: rejected poison\n", kept, kept)
	}
	listed := func(want string) func() bool {
		return func() bool {
			out, _, err := runCLIWith(context.Background(), "", "job", "quarantine", "list", job, "--server", ts.base)
			return err == nil && normalise(out, names) == want
		}
	}
	ts.waitFor("the binary key parked", listed(list(2)))
	ts.check(names, []cliRun{
		{args: []string{"job", "quarantine", "release", job, "\ufffdpoi\x00s"}, wantErr: "Not found (404): job JOB: key \"\ufffdpoi\\x00s\" is not quarantined: not found"},
		{args: []string{"job", "quarantine", "release", job, "--base64", "_3BvaQBz"}, want: `key "\xffpoi\x00s" of m[0] released: 2 records replayed` + "\n"},
	})
	ts.waitFor("the binary key parked again", listed(list(1)))
}
