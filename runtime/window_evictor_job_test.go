package runtime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/internal/wasmbuild"
	"wasmstream.io/platform/runtime/spec"
)

// TestCustomEvictorJob runs a scripted job whose global window fires every
// 3 records of a key, with udfs/evictor-c's top2 as its custom evictor
// before and after the window function, and checks the exact records each
// firing's window function saw; a record the evictor cannot read fails its
// window, which under on_udf_error skip does not fire.
func TestCustomEvictorJob(t *testing.T) {
	m, js := newJetStreamManager(t)
	ctx := context.Background()
	summary, err := m.UploadModule(ctx, wasmbuild.UDF(t, "windowkinds-c"))
	if err != nil {
		t.Fatal(err)
	}
	evictor, err := m.UploadModule(ctx, wasmbuild.UDF(t, "evictor-c"))
	if err != nil {
		t.Fatal(err)
	}
	a := func(n int) string { return fmt.Sprintf(`{"k":"a","n":%d}`, n) }
	b := func(n int) string { return fmt.Sprintf(`{"k":"b","n":%d}`, n) }
	for _, tt := range []struct {
		when string
		want []string
	}{
		// a's first window keeps 5 and 9; with the next 3, 9 and 7.
		// A global window's bounds are those of the records it keeps. c's
		// first record has no integer n: its window fails and does not
		// fire.
		{"before", []string{"a:1000:2001:2", a(5), a(9), "b:2000:2501:2", b(2), b(3), "a:2000:4001:2", a(9), a(7)}},
		// The window function sees every record; the second firing what
		// the first kept and the next 3; c's window fires before its
		// evictor fails.
		{"after", []string{"a:1000:3001:3", a(5), a(9), a(1), "b:1500:2501:3", b(1), b(2), b(3),
			"c:100:301:3", `{"k":"c","n":"x"}`, `{"k":"c","n":1}`, `{"k":"c","n":2}`, "a:1000:5001:5", a(5), a(9), a(7), a(0), a(6)}},
	} {
		t.Run(tt.when, func(t *testing.T) {
			stream := "EVICTED_" + strings.ToUpper(tt.when)
			if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: stream, Subjects: []string{"evicted." + tt.when}}); err != nil {
				t.Fatal(err)
			}
			rec := func(key string, n string, ts int) string {
				return fmt.Sprintf(`        - record: {key: %s, value: '{"k":"%s","n":%s}', timestamp: %d}`+"\n", key, key, n, ts)
			}
			script := rec("a", "5", 1000) + rec("b", "1", 1500) + rec("a", "9", 2000) + rec("b", "2", 2000) + rec("a", "1", 3000) +
				rec("b", "3", 2500) + rec("c", `"x"`, 100) + rec("c", "1", 200) + rec("c", "2", 300) +
				rec("a", "7", 4000) + rec("a", "0", 4500) + rec("a", "6", 5000)
			info := runJob(t, m, `
name: evicting
on_udf_error: skip
sources:
  - id: script
    test_stream:
      steps:
`+script+`operators:
  - id: win
    input: script
    key_by: {field: k}
    window: {type: global, trigger: {type: count, count: 3}, evictor: {type: custom, module: `+evictor.ID+`, function: top2, when: `+tt.when+`}}
    process_window: {module: `+summary.ID+`, function: summary}
sinks:
  - {id: out, input: win, jetstream: {subject: evicted.`+tt.when+`}}
`)
			got := streamValues(t, js, stream)
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Fatalf("results:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			if win := vertexInfo(info, "win"); win.RecordsIn != 12 || win.UDFErrors != 1 {
				t.Fatalf("win: %d records in, %d udf errors, want 12 and 1", win.RecordsIn, win.UDFErrors)
			}
		})
	}
}

// TestCustomEvictorJobRefused: a custom evictor that does not fit is
// refused at submission, naming the field.
func TestCustomEvictorJobRefused(t *testing.T) {
	m := newTestManager(t)
	ctx := context.Background()
	mod, err := m.UploadModule(ctx, wasmbuild.UDF(t, "evictor-c"))
	if err != nil {
		t.Fatal(err)
	}
	summary, err := m.UploadModule(ctx, wasmbuild.UDF(t, "windowkinds-c"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ op, want string }{
		{`window_all: {type: tumbling, size: 1s, evictor: {type: custom, module: ` + mod.ID + `, function: top3}}, process_window: {module: ` + summary.ID + `, function: summary}`,
			`invalid job: operators[0].window_all.evictor.function: module ` + mod.ID + ` has no function "top3" (it has near_newest (evictor), top2 (evictor))`},
		{`window_all: {type: tumbling, size: 1s, evictor: {type: custom, module: ` + mod.ID + `, function: top2}}, process_window: {module: ` + mod.ID + `, function: near_newest}`,
			`invalid job: operators[0].process_window.function: "near_newest" is a evictor function, want window_process`},
		{`window_all: {type: tumbling, size: 1s, evictor: {type: custom, module: ` + mod.ID + `, function: top2, when: later}}, aggregate: {builtin: count}`,
			`operators[0].window_all.evictor.when: must be one of before, after, both`},
	} {
		_, err := m.SubmitJob(ctx, []byte(`
name: refused
sources: [{id: gen, generator: {kind: clicks, count: 10}}]
operators:
  - {id: win, input: gen, `+tc.op+`}
sinks: [{id: out, input: win, discard: true}]
`))
		// The spec's own checks and the module's functions both answer 400.
		var se *spec.Error
		if !errors.As(err, &se) && !errors.Is(err, ErrInvalidJob) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("submit: %v, want an invalid job with %q", err, tc.want)
		}
	}
}
