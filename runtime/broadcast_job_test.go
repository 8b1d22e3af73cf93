package runtime

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/internal/wasmbuild"
	"wasmstream.io/platform/runtime/plan"
	"wasmstream.io/platform/state"
)

// TestBroadcastRulesJob runs the rules module (udfs/rules) as a job on
// embedded NATS: a rule stream broadcast to the three subtasks of a
// broadcast_process operator, an event stream keyed by user. Each step
// waits until the operator has taken in what was published, so that the
// order between the two inputs, which the platform does not fix, is the
// test's: events meet no rule, then the first rules, then the changed
// ones; every subtask holds every rule.
func TestBroadcastRulesJob(t *testing.T) {
	m, js, mod := newRulesJob(t)
	ctx := context.Background()
	info, err := m.SubmitJob(ctx, []byte(fmt.Sprintf(`
name: rules
sources:
  - {id: rules, jetstream: {stream: RULES}}
  - {id: events, jetstream: {stream: EVENTS}}
operators:
  - id: match
    parallelism: 3
    input: events
    key_by: {field: user}
    broadcast_process: {broadcast: rules, module: %s, process_element: match, process_broadcast: update}
sinks: [{id: out, input: match, jetstream: {subject: matches}}]
`, mod.ID)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = m.CancelJob(context.Background(), info.ID) })
	users := []string{"ann", "bob", "cid", "dan", "eve", "fay"}
	in := int64(0)
	publish := func(subject string, values ...string) {
		t.Helper()
		for _, v := range values {
			if _, err := js.Publish(ctx, subject, []byte(v)); err != nil {
				t.Fatal(err)
			}
		}
		// A rule reaches all three subtasks, an event one.
		if subject == "rules" {
			in += 3 * int64(len(values))
		} else {
			in += int64(len(values))
		}
		waitFor(t, fmt.Sprintf("operator match took in %d records", in), func() bool {
			got, err := m.GetJob(ctx, info.ID)
			return err == nil && vertexInfo(got, "match").RecordsIn == in
		})
	}
	events := func(amount int) []string {
		var out []string
		for _, u := range users {
			out = append(out, fmt.Sprintf(`{"user":%q,"amount":%d}`, u, amount))
		}
		return out
	}
	publish("events", events(500)...)
	publish("rules", `{"rule":"big","min":100}`, `{"rule":"any","min":0}`)
	publish("events", events(150)...)
	publish("rules", `{"rule":"big","min":200}`, `{"rule":"any"}`, `{"rule":"huge","min":1000}`)
	publish("events", events(250)...)
	var want []string
	for _, u := range users {
		want = append(want,
			fmt.Sprintf(`{"user":%q,"rule":"any","amount":150,"hits":1}`, u),
			fmt.Sprintf(`{"user":%q,"rule":"big","amount":150,"hits":2}`, u),
			fmt.Sprintf(`{"user":%q,"rule":"big","amount":250,"hits":3}`, u))
	}
	waitFor(t, fmt.Sprintf("%d matches", len(want)), func() bool {
		st, err := js.Stream(ctx, "MATCHES")
		if err != nil {
			return false
		}
		si, err := st.Info(ctx)
		return err == nil && si.State.Msgs >= uint64(len(want))
	})
	got := readSubject(t, js, "MATCHES", "matches")
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("matches:\n got %q\nwant %q", got, want)
	}
}

// TestRulesJobSpecPlans checks that udfs/rules/job.yaml parses and plans
// against the rules module: a keyed edge, then the broadcast one.
func TestRulesJobSpecPlans(t *testing.T) {
	m := newTestManager(t)
	p, _ := planExampleJob(t, m, "rules")
	v := p.Vertex("match")
	if len(v.In) != 2 || v.In[0].Ship != plan.ShipHash || v.In[0].From.ID != "events" || v.In[1].Ship != plan.ShipBroadcast ||
		v.In[1].From.ID != "rules" || v.Fn.Function != "match" || v.Broadcast.Function != "update" {
		t.Fatalf("plan of match: %+v", v)
	}
}

// A module's functions of the wrong kinds, and one without a broadcast
// state, are refused at submission with the field.
func TestBroadcastPlanProblems(t *testing.T) {
	m := newTestManager(t)
	rules, err := m.UploadModule(context.Background(), wasmbuild.UDF(t, "rules"))
	if err != nil {
		t.Fatal(err)
	}
	dedup, err := m.UploadModule(context.Background(), wasmbuild.UDF(t, "dedup"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		module, element, broadcast, extra, want string
	}{
		{rules.ID, "update", "update", "", `operators[0].broadcast_process.process_element.function: "update" is a process_broadcast function, want process`},
		{rules.ID, "match", "match", "", `operators[0].broadcast_process.process_broadcast.function: "match" is a process function, want process_broadcast`},
		{rules.ID, "match", "update", "\n    state_ttl: [{state: rules, ttl: 1h}]", `operators[0].state_ttl[0].state: "rules" is a broadcast state, which has no ttl`},
		{dedup.ID, "dedup", "dedup", "", `declares no broadcast state (it declares seen (value))`},
	}
	for _, tt := range tests {
		_, err := m.SubmitJob(context.Background(), []byte(fmt.Sprintf(`
name: bad
sources: [{id: events, generator: {kind: clicks}}, {id: rules, generator: {kind: sequence}}]
operators:
  - id: match
    input: events
    key_by: {field: user}
    broadcast_process: {broadcast: rules, module: %s, process_element: %s, process_broadcast: %s}%s
sinks: [{id: out, input: match, discard: true}]
`, tt.module, tt.element, tt.broadcast, tt.extra)))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("got %v, want %q", err, tt.want)
		}
	}
}

// A broadcast_process job's savepoint restores into a job at another
// parallelism (2 to 3): every new subtask holds the rules, though the rule
// stream is not read again, and each user's hits go on from the savepoint.
func TestBroadcastSavepointRescalesJob(t *testing.T) {
	m, js, mod := newRulesJob(t)
	ctx := context.Background()
	spec := func(p int) []byte {
		return fmt.Appendf(nil, `
name: rules
checkpoint: {interval: 1h, mode: at_least_once}
sources:
  - {id: rules, jetstream: {stream: RULES}}
  - {id: events, jetstream: {stream: EVENTS}, timestamp: {field: ts}}
operators:
  - id: match
    parallelism: %d
    input: events
    key_by: {field: user}
    broadcast_process: {broadcast: rules, module: %s, process_element: match, process_broadcast: update}
sinks: [{id: out, input: match, jetstream: {subject: matches}}]
`, p, mod.ID)
	}
	users := []string{"ann", "bob", "cid", "dan", "eve", "fay", "gus", "hal"}
	for i := 0; i < 3; i++ {
		r := state.RangeOf(128, 3, i)
		if !slices.ContainsFunc(users, func(u string) bool { return r.Contains(state.KeyGroup([]byte(u), 128)) }) {
			t.Fatalf("no user in subtask %d of 3", i)
		}
	}
	events := func(amount int) {
		for _, u := range users {
			if _, err := js.Publish(ctx, "events", fmt.Appendf(nil, `{"user":%q,"amount":%d,"ts":%d}`, u, amount, amount)); err != nil {
				t.Fatal(err)
			}
		}
	}
	matches := func(n int) []string {
		waitFor(t, fmt.Sprintf("%d matches", n), func() bool { return len(readSubject(t, js, "MATCHES", "matches")) >= n })
		got := readSubject(t, js, "MATCHES", "matches")
		slices.Sort(got)
		return got
	}
	first, err := m.SubmitJob(ctx, spec(2))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []string{`{"rule":"big","min":100}`, `{"rule":"any","min":0}`} {
		if _, err := js.Publish(ctx, "rules", []byte(r)); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "both subtasks took in both rules", func() bool {
		got, err := m.GetJob(ctx, first.ID)
		return err == nil && vertexInfo(got, "match").RecordsIn == 4
	})
	events(150)
	matches(2 * len(users))
	sp := waitSavepoint(t, m, first.ID, false)
	if _, err := m.CancelJob(ctx, first.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := m.WaitJob(ctx, first.ID); err != nil {
		t.Fatal(err)
	}
	second, err := m.SubmitJobFromSavepoint(ctx, spec(3), sp, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = m.CancelJob(context.Background(), second.ID) })
	events(120)
	var want []string
	for _, u := range users {
		want = append(want,
			fmt.Sprintf(`{"user":%q,"rule":"any","amount":150,"hits":1}`, u),
			fmt.Sprintf(`{"user":%q,"rule":"big","amount":150,"hits":2}`, u),
			fmt.Sprintf(`{"user":%q,"rule":"any","amount":120,"hits":3}`, u),
			fmt.Sprintf(`{"user":%q,"rule":"big","amount":120,"hits":4}`, u))
	}
	slices.Sort(want)
	if got := matches(len(want)); !slices.Equal(got, want) {
		t.Fatalf("matches:\n got %q\nwant %q", got, want)
	}
	info, err := m.GetJob(ctx, second.ID)
	if err != nil || vertexInfo(info, "match").Parallelism != 3 || vertexInfo(info, "match").RecordsIn != int64(len(users)) {
		t.Fatalf("restored job: %+v, %v", vertexInfo(info, "match"), err)
	}
}

// newRulesJob starts a manager on JetStream with udfs/rules uploaded and
// the empty streams RULES (rules), EVENTS (events) and MATCHES (matches).
func newRulesJob(t *testing.T) (*Manager, jetstream.JetStream, ModuleInfo) {
	t.Helper()
	m, js := newJetStreamManager(t)
	ctx := context.Background()
	for _, s := range []jetstream.StreamConfig{
		{Name: "RULES", Subjects: []string{"rules"}}, {Name: "EVENTS", Subjects: []string{"events"}}, {Name: "MATCHES", Subjects: []string{"matches"}},
	} {
		if _, err := js.CreateStream(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	mod, err := m.UploadModule(ctx, wasmbuild.UDF(t, "rules"))
	if err != nil {
		t.Fatal(err)
	}
	return m, js, mod
}
