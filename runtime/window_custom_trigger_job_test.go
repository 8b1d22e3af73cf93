package runtime

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/internal/wasmbuild"
)

// A job whose window has the custom trigger early of udfs/trigger (Go and
// Rust): an urgent click fires its user's minute at once with the count so
// far, and the watermark fires it again at its end with all of it; with
// purge: true the end has only what came after the early firing.
func TestCustomTriggerJob(t *testing.T) {
	for _, tc := range []struct {
		module string
		purge  bool
		want   []string
	}{
		{"trigger", false, []string{
			`{"key":"a","window_start":0,"window_end":10000,"value":2}`,
			`{"key":"a","window_start":0,"window_end":10000,"value":3}`,
			`{"key":"b","window_start":0,"window_end":10000,"value":1}`,
			`{"key":"a","window_start":10000,"window_end":20000,"value":1}`,
			`{"key":"a","window_start":10000,"window_end":20000,"value":1}`,
		}},
		{"trigger-rust", true, []string{
			`{"key":"a","window_start":0,"window_end":10000,"value":2}`,
			`{"key":"a","window_start":0,"window_end":10000,"value":1}`,
			`{"key":"b","window_start":0,"window_end":10000,"value":1}`,
			`{"key":"a","window_start":10000,"window_end":20000,"value":1}`,
		}},
	} {
		t.Run(tc.module, func(t *testing.T) {
			m, js := newJetStreamManager(t)
			ctx := context.Background()
			if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "COUNTS", Subjects: []string{"counts"}}); err != nil {
				t.Fatal(err)
			}
			mod, err := m.UploadModule(ctx, wasmbuild.UDF(t, tc.module))
			if err != nil {
				t.Fatal(err)
			}
			purge := "false"
			if tc.purge {
				purge = "true"
			}
			runJob(t, m, `
name: urgent
sources:
  - id: script
    test_stream:
      steps:
        - record: {key: a, value: '{"user":"a"}', timestamp: 1000}
        - record: {key: a, value: '{"user":"a","urgent":true}', timestamp: 2000}
        - record: {key: b, value: '{"user":"b"}', timestamp: 3000}
        - record: {key: a, value: '{"user":"a"}', timestamp: 4000}
        - watermark: 9999
        - record: {key: a, value: '{"user":"a","urgent":true}', timestamp: 12000}
operators:
  - id: per_user
    input: script
    key_by: {field: user}
    window: {type: tumbling, size: 10s, trigger: {type: custom, module: "`+mod.ID+`", function: early, purge: `+purge+`}}
    aggregate: {builtin: count}
sinks:
  - {id: out, input: per_user, jetstream: {subject: counts}}
`)
			got := streamValues(t, js, "COUNTS")
			// The sink's order across keys follows the window operator's
			// subtasks; each key's results are in the order they fired.
			for _, key := range []string{`"a"`, `"b"`} {
				pick := func(vs []string) []string {
					return slices.DeleteFunc(slices.Clone(vs), func(v string) bool { return !strings.Contains(v, `"key":`+key) })
				}
				if g, w := pick(got), pick(tc.want); !slices.Equal(g, w) {
					t.Errorf("key %s: results %q, want %q", key, g, w)
				}
			}
		})
	}
}

// TestCustomTriggerJobRefused: a custom trigger whose function is missing
// or of another kind is refused at submission, naming the field.
func TestCustomTriggerJobRefused(t *testing.T) {
	m := newTestManager(t)
	mod, err := m.UploadModule(context.Background(), wasmbuild.UDF(t, "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ fn, want string }{
		{"nope", `operators[0].window.trigger.function: module ` + mod.ID + ` has no function "nope"`},
		{"summary", `operators[0].window.trigger.function: "summary" is a window_process function, want trigger`},
	} {
		_, err := m.SubmitJob(context.Background(), []byte(`
name: refused
sources: [{id: gen, generator: {kind: clicks, count: 10}}]
operators:
  - {id: win, input: gen, key_by: {field: user}, window: {type: tumbling, size: 1s, trigger: {type: custom, module: "`+mod.ID+`", function: `+tc.fn+`}}, aggregate: {builtin: count}}
sinks: [{id: out, input: win, discard: true}]
`))
		if !errors.Is(err, ErrInvalidJob) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("submit: %v, want an invalid job with %q", err, tc.want)
		}
	}
}

// TestTriggerJobSpecPlans checks that udfs/trigger/job.yaml parses and
// plans, its window with the custom trigger early.
func TestTriggerJobSpecPlans(t *testing.T) {
	p, mod := planExampleJob(t, newTestManager(t), "trigger")
	tr := p.Vertex("per_user").Window.Trigger
	if tr == nil || tr.Fn == nil || tr.Fn.Module != mod.ID || tr.Fn.Function != "early" {
		t.Fatalf("trigger %+v, want early of %s", tr, mod.ID)
	}
}
