package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/internal/wasmbuild"
	"wasmstream.io/platform/runtime/exec"
)

// dedupVariant builds udfs/dedup-wat with each old string of edits
// replaced by its new one: a module of the same function with another
// behaviour or other declared states.
func dedupVariant(t *testing.T, edits ...string) []byte {
	t.Helper()
	src := filepath.Join(wasmbuild.Root(), "udfs", "dedup-wat")
	dir := filepath.Join(t.TempDir(), "dedup-wat")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"Makefile", "dedup-wat.wat"} {
		data, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		for i := 0; name == "dedup-wat.wat" && i+1 < len(edits); i += 2 {
			if !strings.Contains(text, edits[i]) {
				t.Fatalf("dedup-wat.wat has no %q", edits[i])
			}
			text = strings.ReplaceAll(text, edits[i], edits[i+1])
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return wasmbuild.Dir(t, dir)
}

// Variants of dedup-wat.
var (
	// trapsOnCall traps in every call: the first records it gets after
	// it restored the job fail it.
	trapsOnCall = []string{"(if (local.get $fn) (then unreachable))", "unreachable"}
	// renamesState declares its value state as "mark" instead of "seen".
	renamesState = []string{`\"name\":\"seen\"`, `\"name\":\"mark\"`}
	// retypesState declares "seen" a list state.
	retypesState = []string{`\"kind\":\"value\"`, `\"kind\":\"list\" `}
	// trapsInMigration declares "seen" retired and a migrate_state
	// function, which traps as any function but dedup does.
	trapsInMigration = []string{
		`{\"name\":\"dedup\",\"kind\":\"process\"}]`, `{\"name\":\"dedup\",\"kind\":\"process\"},{\"name\":\"m\",\"kind\":\"migrate_state\"}]`,
		`\"ttl\":\"1h\"}`, `\"ttl\":\"1h\",\"retired\":true}`,
		`(i64.const 110)`, `(i64.const 161)`,
	}
	// marksTwo marks a key seen with the byte 2, which udfs/dedup-migrate
	// refuses to convert.
	marksTwo = []string{`(i32.const 8) "\01"`, `(i32.const 8) "\02"`}
)

// upgradePlatform runs a keyed job on an embedded NATS server: a dedup
// process function and a built-in window count over the same keys.
type upgradePlatform struct {
	t  *testing.T
	m  *Manager
	js jetstream.JetStream
}

func newUpgradePlatform(t *testing.T) *upgradePlatform {
	m, js := newJetStreamManager(t)
	ctx := context.Background()
	for _, s := range []jetstream.StreamConfig{
		{Name: "IN", Subjects: []string{"in"}}, {Name: "FIRSTS", Subjects: []string{"firsts"}}, {Name: "WINDOWS", Subjects: []string{"windows"}},
	} {
		if _, err := js.CreateStream(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	return &upgradePlatform{t: t, m: m, js: js}
}

func (p *upgradePlatform) upload(wasm []byte) string {
	p.t.Helper()
	mod, err := p.m.UploadModule(context.Background(), wasm)
	if err != nil {
		p.t.Fatal(err)
	}
	return mod.ID
}

// spec is the job with module, parallelism and on_udf_error policy.
func upgradeSpec(module string, parallelism int, policy string) string {
	return fmt.Sprintf(`
name: upgrade
parallelism: %d
on_udf_error: %s
checkpoint: {interval: 50ms, mode: exactly_once}
sources: [{id: in, parallelism: 1, jetstream: {stream: IN, subjects: [in]}, timestamp: {field: ts},
  watermark: {strategy: bounded_out_of_orderness, max_out_of_orderness: 0s, interval: 0s}}]
operators:
  - {id: dedup, input: in, key_by: {field: user}, process: {module: "%s", function: dedup}}
  - {id: counts, input: in, key_by: {field: user}, window: {type: tumbling, size: 10s}, aggregate: {builtin: count}}
sinks:
  - {id: firsts, input: dedup, jetstream: {subject: firsts}}
  - {id: windows, input: counts, jetstream: {subject: windows}}
`, parallelism, policy, module)
}

// publish sends one record of each key from..to-1 at each timestamp.
func (p *upgradePlatform) publish(from, to int, ts ...int64) {
	p.t.Helper()
	for _, at := range ts {
		for k := from; k < to; k++ {
			if _, err := p.js.Publish(context.Background(), "in", fmt.Appendf(nil, `{"user":"k%02d","ts":%d}`, k, at)); err != nil {
				p.t.Fatal(err)
			}
		}
	}
}

// firsts is what the dedup sink wrote, sorted.
func (p *upgradePlatform) firsts() []string {
	return slices.Sorted(slices.Values(streamValues(p.t, p.js, "FIRSTS")))
}

// windows are the window counts written, by key.
func (p *upgradePlatform) windows() map[string]int {
	out := map[string]int{}
	for _, v := range streamValues(p.t, p.js, "WINDOWS") {
		var w struct {
			Key   string `json:"key"`
			Start int64  `json:"window_start"`
			Value int    `json:"value"`
		}
		if err := json.Unmarshal([]byte(v), &w); err != nil {
			p.t.Fatal(err)
		}
		out[fmt.Sprintf("%s@%d", w.Key, w.Start)] += w.Value
	}
	return out
}

// versions waits until the job's versions have these outcomes.
func (p *upgradePlatform) versions(id string, outcomes ...string) JobInfo {
	p.t.Helper()
	var info JobInfo
	waitFor(p.t, fmt.Sprintf("versions %v", outcomes), func() bool {
		var err error
		if info, err = p.m.GetJob(context.Background(), id); err != nil {
			p.t.Fatal(err)
		}
		if info.State.Terminal() {
			p.t.Fatalf("job %s: %s %s (versions %+v)", id, info.State, info.Failure, info.Versions)
		}
		if len(info.Versions) != len(outcomes) {
			return false
		}
		for i, v := range info.Versions {
			if v.Outcome != outcomes[i] {
				return false
			}
		}
		return true
	})
	return info
}

// finish fires the windows with a record far ahead, waits for every
// output, then cancels the job, so that nothing more is written.
func (p *upgradePlatform) finish(id string, firsts, windows int) {
	p.t.Helper()
	if _, err := p.js.Publish(context.Background(), "in", []byte(`{"user":"clock","ts":100000}`)); err != nil {
		p.t.Fatal(err)
	}
	waitFor(p.t, "every output", func() bool {
		return running(p.t, p.m, id) && len(streamValues(p.t, p.js, "FIRSTS")) >= firsts && len(streamValues(p.t, p.js, "WINDOWS")) >= windows
	})
	if _, err := p.m.CancelJob(context.Background(), id); err != nil {
		p.t.Fatal(err)
	}
}

// wantFirsts are the first records of keys 0..keys-1 (at ts 1000 for those
// below old, at 4000 for the others) and of the clock.
func wantFirsts(old, keys int) []string {
	var out []string
	for k := 0; k < keys; k++ {
		ts := 1000
		if k >= old {
			ts = 4000
		}
		out = append(out, fmt.Sprintf(`{"user":"k%02d","ts":%d}`, k, ts))
	}
	out = append(out, `{"user":"clock","ts":100000}`)
	return slices.Sorted(slices.Values(out))
}

// wantWindows are the counts of window [0,10000): 5 records for each key
// below old, 2 for the others (the clock's window does not fire).
func wantWindows(old, keys int) map[string]int {
	out := map[string]int{}
	for k := 0; k < keys; k++ {
		n := 5
		if k >= old {
			n = 2
		}
		out[fmt.Sprintf("k%02d@0", k)] = n
	}
	return out
}

// An upgrade of a running keyed job, or its rollback when the new module
// fails on its first records, keeps its state and windows and writes the
// output one version alone would have, exactly once: keys seen before the
// switch are not emitted again, and every window counts every record.
func TestUpgradeKeepsStateExactlyOnce(t *testing.T) {
	tests := []struct {
		name    string
		policy  string
		next    []string // the edits of the new module
		v1      []string // the edits of the running module
		nextUDF string   // the new module, when not dedup-c or a variant
		// atRestore is set when the new version fails as it restores,
		// before its probation can be seen.
		atRestore bool
		outcomes  []string
		reason    string
	}{
		{name: "committed", policy: "fail", outcomes: []string{VersionReplaced, VersionRunning}},
		{name: "trap rolls back", policy: "fail", next: trapsOnCall,
			outcomes: []string{VersionReplaced, VersionRolledBack, VersionRunning}, reason: "the new version failed"},
		{name: "skipped errors roll back", policy: "skip", next: trapsOnCall,
			outcomes: []string{VersionReplaced, VersionRolledBack, VersionRunning}},
		// dedup-migrate, and its Rust twin, keeps the marks in a map
		// state: its migrate_state function converts the running
		// version's value state.
		{name: "migrated state", policy: "fail", nextUDF: "dedup-migrate", outcomes: []string{VersionReplaced, VersionRunning}},
		{name: "migrated state in Rust", policy: "fail", nextUDF: "dedup-migrate-rust", outcomes: []string{VersionReplaced, VersionRunning}},
		{name: "failed migration in Rust rolls back", policy: "fail", v1: marksTwo, nextUDF: "dedup-migrate-rust", atRestore: true,
			outcomes: []string{VersionReplaced, VersionRolledBack, VersionRunning}, reason: "seen holds 02, not the mark 01"},
		{name: "trap in migration rolls back", policy: "fail", next: trapsInMigration, atRestore: true,
			outcomes: []string{VersionReplaced, VersionRolledBack, VersionRunning}, reason: "operator[dedup]: migrate_state m: "},
		{name: "failed migration rolls back", policy: "fail", v1: marksTwo, nextUDF: "dedup-migrate", atRestore: true,
			outcomes: []string{VersionReplaced, VersionRolledBack, VersionRunning}, reason: "operator[dedup]: migrate_state migrate: key \"k"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newUpgradePlatform(t)
			ctx := context.Background()
			v1 := p.upload(wasmbuild.UDF(t, "dedup-wat"))
			if tc.v1 != nil {
				v1 = p.upload(dedupVariant(t, tc.v1...))
			}
			next := p.upload(wasmbuild.UDF(t, "dedup-c"))
			switch {
			case tc.next != nil:
				next = p.upload(dedupVariant(t, tc.next...))
			case tc.nextUDF != "":
				next = p.upload(wasmbuild.UDF(t, tc.nextUDF))
			}
			p.publish(0, 12, 1000, 2000, 3000)
			job, err := p.m.SubmitJob(ctx, []byte(upgradeSpec(v1, 2, tc.policy)))
			if err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the first outputs", func() bool { return running(t, p.m, job.ID) && len(p.firsts()) == 12 })
			sw, err := p.m.UpgradeJob(ctx, job.ID, UpgradeRequest{Module: next, Probation: Probation{Records: 10}})
			if err != nil {
				t.Fatal(err)
			}
			if sw.Version != 2 || sw.FromCheckpoint < 1 {
				t.Fatalf("switch %+v", sw)
			}
			// Old keys again, and new ones, once the new version took
			// over (before, the old one would process them before the
			// checkpoint's barrier).
			if tc.atRestore {
				p.versions(job.ID, tc.outcomes...)
			} else {
				p.versions(job.ID, VersionReplaced, VersionProbation)
			}
			p.publish(0, 16, 4000, 5000)
			info := p.versions(job.ID, tc.outcomes...)
			last := info.Versions[len(info.Versions)-1]
			if v := info.Versions[1]; v.FromCheckpoint != sw.FromCheckpoint || !strings.Contains(v.Reason, tc.reason) {
				t.Fatalf("version 2: %+v, want from checkpoint %d and a reason with %q", v, sw.FromCheckpoint, tc.reason)
			}
			wantModule := next
			if tc.reason != "" || tc.policy == "skip" {
				wantModule = v1
			}
			if info.ID != job.ID || info.Modules[0].ID != wantModule || last.Modules[0].ID != wantModule {
				t.Fatalf("job %s runs %+v (versions %+v), want %s", info.ID, info.Modules, info.Versions, wantModule)
			}
			p.finish(job.ID, 17, 16)
			if got, want := p.firsts(), wantFirsts(12, 16); !slices.Equal(got, want) {
				t.Fatalf("dedup output %q, want %q", got, want)
			}
			if got, want := p.windows(), wantWindows(12, 16); !mapsEqual(got, want) {
				t.Fatalf("window counts %v, want %v", got, want)
			}
		})
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// A new version that does not fit the running one is refused before the
// job is touched, with the field and the state named.
func TestUpgradeRefusesIncompatibleVersions(t *testing.T) {
	p := newUpgradePlatform(t)
	ctx := context.Background()
	v1 := p.upload(wasmbuild.UDF(t, "dedup-wat"))
	job, err := p.m.SubmitJob(ctx, []byte(upgradeSpec(v1, 2, "fail")))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the job running", func() bool { info, _ := p.m.GetJob(ctx, job.ID); return info.State == StateRunning })
	otherShape := strings.Replace(upgradeSpec(v1, 2, "fail"), "input: counts", "input: dedup", 1)
	tests := []struct {
		name string
		req  UpgradeRequest
		want string
	}{
		{"renamed state", UpgradeRequest{Module: p.upload(dedupVariant(t, renamesState...))}, `operators[0].process: the new module declares no state "seen"`},
		{"retyped state", UpgradeRequest{Module: p.upload(dedupVariant(t, retypesState...))}, `operators[0].process: state "seen" is a list state in the new module, a value state in the running one`},
		{"other graph", UpgradeRequest{Spec: otherShape}, `sinks[1]: "windows" reads [dedup], it read [counts]`},
		{"other checkpoints", UpgradeRequest{Spec: strings.Replace(upgradeSpec(v1, 2, "fail"), "50ms", "1s", 1)}, "checkpoint: a new version keeps"},
		{"no module", UpgradeRequest{}, "module: give the new module"},
		{"unknown module", UpgradeRequest{Module: "nosuch@3"}, `module: no module "nosuch@3"`},
		{"bad probation", UpgradeRequest{Module: v1, Probation: Probation{Time: "soon"}}, `probation.time: "soon"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := p.m.UpgradeJob(ctx, job.ID, tc.req)
			if !errors.Is(err, ErrInvalidJob) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want an invalid job with %q", err, tc.want)
			}
		})
	}
	info, err := p.m.GetJob(ctx, job.ID)
	if err != nil {
		t.Fatal(err)
	}
	if info.State != StateRunning || len(info.Versions) != 1 || info.Versions[0].Outcome != VersionRunning {
		t.Fatalf("job after refused upgrades: %s %+v", info.State, info.Versions)
	}
}

// A platform that stops while a new version is on probation resumes the
// version before it from the checkpoint the new one took over at; one
// that stops after the new version committed resumes the new one. Either
// way the output is exactly once.
func TestUpgradeSurvivesRestart(t *testing.T) {
	tests := []struct {
		name      string
		probation Probation
		outcomes  []string // after the switch
		resumed   []string // after the restart
		runs      string   // v1 or v2
	}{
		{"on probation", Probation{Records: 1 << 40, Time: "1h"}, []string{VersionReplaced, VersionProbation},
			[]string{VersionReplaced, VersionRolledBack, VersionRunning}, "v1"},
		{"committed", Probation{Records: 1}, []string{VersionReplaced, VersionRunning},
			[]string{VersionReplaced, VersionRunning}, "v2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rp := newRecoveryPlatform(t)
			rp.stream("IN", "in")
			rp.stream("FIRSTS", "firsts")
			rp.stream("WINDOWS", "windows")
			p := &upgradePlatform{t: t, m: rp.m, js: rp.js}
			ctx := context.Background()
			mods := map[string]string{"v1": p.upload(wasmbuild.UDF(t, "dedup-wat")), "v2": p.upload(wasmbuild.UDF(t, "dedup-c"))}
			p.publish(0, 12, 1000, 2000, 3000)
			job, err := p.m.SubmitJob(ctx, []byte(upgradeSpec(mods["v1"], 2, "fail")))
			if err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the first outputs", func() bool { return running(t, p.m, job.ID) && len(p.firsts()) == 12 })
			if _, err := p.m.UpgradeJob(ctx, job.ID, UpgradeRequest{Module: mods["v2"], Probation: tc.probation}); err != nil {
				t.Fatal(err)
			}
			p.versions(job.ID, VersionReplaced, VersionProbation)
			p.publish(0, 16, 4000)
			p.versions(job.ID, tc.outcomes...)
			waitFor(t, "the new version's input", func() bool {
				info, _ := p.m.GetJob(ctx, job.ID)
				return len(info.Vertices) > 1 && info.Vertices[1].RecordsIn >= 16
			})
			rp.stop()
			rp.start()
			p.m = rp.m
			info := p.versions(job.ID, tc.resumed...)
			if info.Modules[0].ID != mods[tc.runs] {
				t.Fatalf("resumed job runs %+v, want %s (versions %+v)", info.Modules, tc.runs, info.Versions)
			}
			p.publish(0, 16, 5000)
			p.finish(job.ID, 17, 16)
			if got, want := p.firsts(), wantFirsts(12, 16); !slices.Equal(got, want) {
				t.Fatalf("dedup output %q, want %q", got, want)
			}
			if got, want := p.windows(), wantWindows(12, 16); !mapsEqual(got, want) {
				t.Fatalf("window counts %v, want %v", got, want)
			}
		})
	}
}

// A switch whose checkpoint fails (here a task fails its snapshot) is
// abandoned: the job restarts on the version it ran, the history records
// the new one failed, and the output is exactly once.
func TestUpgradeAbandonedWhenItsCheckpointFails(t *testing.T) {
	p := newUpgradePlatform(t)
	ctx := context.Background()
	// The first snapshot taken while the switch is pending fails: that
	// of E, or of a checkpoint in progress before it.
	var fired atomic.Bool
	p.m.env.Faults = func(point, id, task string) error {
		j, ok := p.m.job(id)
		if !ok || point != exec.FaultSnapshot {
			return nil
		}
		j.mu.Lock()
		pending := j.switching != nil
		j.mu.Unlock()
		if pending && fired.CompareAndSwap(false, true) {
			return fmt.Errorf("injected failure of %s's snapshot", task)
		}
		return nil
	}
	v1 := p.upload(wasmbuild.UDF(t, "dedup-wat"))
	v2 := p.upload(wasmbuild.UDF(t, "dedup-c"))
	p.publish(0, 12, 1000, 2000, 3000)
	spec := strings.Replace(upgradeSpec(v1, 2, "fail"), "checkpoint:", "restart: {strategy: fixed_delay, delay: 10ms}\ncheckpoint:", 1)
	job, err := p.m.SubmitJob(ctx, []byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the first outputs", func() bool { return running(t, p.m, job.ID) && len(p.firsts()) == 12 })
	if _, err := p.m.UpgradeJob(ctx, job.ID, UpgradeRequest{Module: v2}); err != nil {
		t.Fatal(err)
	}
	p.versions(job.ID, VersionRunning, VersionFailed)
	var info JobInfo
	waitFor(t, "the restarted job", func() bool { info, _ = p.m.GetJob(ctx, job.ID); return info.State == StateRunning })
	if info.Modules[0].ID != v1 || info.Restarts != 1 || !strings.Contains(info.Versions[1].Reason, "injected failure") {
		t.Fatalf("job runs %+v after %d restarts, want %s after 1", info.Modules, info.Restarts, v1)
	}
	p.publish(0, 16, 4000, 5000)
	p.finish(job.ID, 17, 16)
	if got, want := p.firsts(), wantFirsts(12, 16); !slices.Equal(got, want) {
		t.Fatalf("dedup output %q, want %q", got, want)
	}
	if got, want := p.windows(), wantWindows(12, 16); !mapsEqual(got, want) {
		t.Fatalf("window counts %v, want %v", got, want)
	}
}
