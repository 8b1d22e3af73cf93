package runtime

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"wasmstream.io/platform/internal/wasmbuild"
	"wasmstream.io/platform/runtime/exec"
	"wasmstream.io/platform/state"
)

// canaryKeyGroups are the key groups of subtask 0 of the upgrade job's
// keyed operators (max_parallelism 128, parallelism 2).
const canaryKeyGroups = "0-63"

// inCanary reports whether key k%02d is in canaryKeyGroups.
func inCanary(k int) bool { return keyInCanary(fmt.Sprintf("k%02d", k)) }

// keyInCanary reports whether key is in canaryKeyGroups.
func keyInCanary(key string) bool { return state.KeyGroup([]byte(key), 128) <= 63 }

// dedupOutput is what dedup-c (v1) or dedup-v2 (v2) emits for the first
// record of key at ts.
func dedupOutput(version string, key string, ts int) string {
	if version == "v2" {
		return fmt.Sprintf(`{"v":2,"user":"%s","ts":%d}`, key, ts)
	}
	return fmt.Sprintf(`{"user":"%s","ts":%d}`, key, ts)
}

// A canary runs the new module on the canary's key groups only: the
// first records of keys there show the new module's output, the others
// the old one's. A promotion then runs the new module on every key, a
// rollback the old one; a rollback of a canary still on probation
// restores the checkpoint it took over at, so that nothing it wrote
// stays. Across every switch the output is exactly once: no key's first
// record is lost or written twice, and every window counts every record.
func TestCanaryPromoteAndRollback(t *testing.T) {
	tests := []struct {
		name string
		// probation of the canary; onProbation ends it while on
		// probation (a rollback from the checkpoint it took over at).
		probation   Probation
		onProbation bool
		end         func(m *Manager, id string) (SwitchInfo, error)
		// outcomes after the end; canaryWrote: the canary's output of
		// keys 12-15 stays; after is the version of keys 16-19.
		outcomes    []string
		change      string
		canaryWrote bool
		after       string
	}{
		{name: "promote", probation: Probation{Records: 10},
			end: func(m *Manager, id string) (SwitchInfo, error) {
				return m.PromoteJob(context.Background(), id, PromoteRequest{Probation{Records: 1}})
			},
			outcomes: []string{VersionReplaced, VersionReplaced, VersionRunning}, change: changePromote, canaryWrote: true, after: "v2"},
		{name: "rollback", probation: Probation{Records: 10},
			end:      func(m *Manager, id string) (SwitchInfo, error) { return m.RollbackJob(context.Background(), id) },
			outcomes: []string{VersionReplaced, VersionReplaced, VersionRunning}, change: changeRollback, canaryWrote: true, after: "v1"},
		{name: "rollback on probation", probation: Probation{Records: 1 << 40, Time: "1h"}, onProbation: true,
			end:      func(m *Manager, id string) (SwitchInfo, error) { return m.RollbackJob(context.Background(), id) },
			outcomes: []string{VersionReplaced, VersionRolledBack, VersionRunning}, change: changeRollback, canaryWrote: false, after: "v1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newUpgradePlatform(t)
			ctx := context.Background()
			v1 := p.upload(wasmbuild.UDF(t, "dedup-c"))
			v2 := p.upload(wasmbuild.UDF(t, "dedup-v2"))
			p.publish(0, 12, 1000, 2000, 3000)
			job, err := p.m.SubmitJob(ctx, []byte(upgradeSpec(v1, 2, "fail")))
			if err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the first outputs", func() bool { return running(t, p.m, job.ID) && len(p.firsts()) == 12 })
			sw, err := p.m.UpgradeJob(ctx, job.ID, UpgradeRequest{Module: v2, Canary: &CanaryRequest{KeyGroups: canaryKeyGroups}, Probation: tc.probation})
			if err != nil {
				t.Fatal(err)
			}
			p.versions(job.ID, VersionReplaced, VersionProbation)
			p.publish(0, 16, 4000, 5000)
			if !tc.onProbation {
				p.versions(job.ID, VersionReplaced, VersionRunning)
			}
			// The canary's figures: each version's subtask of dedup took
			// the records of its keys, 2 of each key since the switch.
			var canaryIn int64
			for k := range 16 {
				if inCanary(k) {
					canaryIn += 2
				}
			}
			if canaryIn == 0 || canaryIn == 32 {
				t.Fatalf("keys k00-k15 are all on one side of key group 64: the test shows nothing")
			}
			var info JobInfo
			waitFor(t, "the canary's figures", func() bool {
				info, _ = p.m.GetJob(ctx, job.ID)
				return info.Canary != nil && len(info.Canary.Figures) == 2 && info.Canary.Figures[0].RecordsIn+info.Canary.Figures[1].RecordsIn == 32
			})
			stable, canary := info.Canary.Figures[0], info.Canary.Figures[1]
			if info.Canary.KeyGroups != canaryKeyGroups || info.Canary.Modules[0].ID != v2 ||
				stable.Vertex != "dedup" || stable.Version != exec.VersionStable || !slices.Equal(stable.Subtasks, []int{1}) || stable.RecordsIn != 32-canaryIn ||
				canary.Version != exec.VersionCanary || !slices.Equal(canary.Subtasks, []int{0}) || canary.RecordsIn != canaryIn || canary.Calls == 0 {
				t.Fatalf("canary %+v, want key groups %s running %s, %d records in the canary's subtask 0 and %d in subtask 1", info.Canary, canaryKeyGroups, v2, canaryIn, 32-canaryIn)
			}
			families := gather(t, p.m)
			labels := func(version string) string {
				return fmt.Sprintf("job_id=%s,job_name=upgrade,version=%s,vertex=dedup", job.ID, version)
			}
			if got := value(t, families["platform_canary_records_in_total"], labels("canary")); got != float64(canaryIn) {
				t.Fatalf("platform_canary_records_in_total{version=canary} %v, want %d", got, canaryIn)
			}
			if got := value(t, families["platform_canary_records_in_total"], labels("stable")); got != float64(32-canaryIn) {
				t.Fatalf("platform_canary_records_in_total{version=stable} %v, want %d", got, 32-canaryIn)
			}
			if v := info.Versions[1]; v.Change != changeCanary || v.Canary == nil || v.Canary.KeyGroups != canaryKeyGroups || v.Canary.Modules[0].ID != v2 || v.Modules[0].ID != v1 || v.FromCheckpoint != sw.FromCheckpoint {
				t.Fatalf("version 2 %+v, want the canary of %s on %s from checkpoint %d", v, v2, canaryKeyGroups, sw.FromCheckpoint)
			}

			if _, err := tc.end(p.m, job.ID); err != nil {
				t.Fatal(err)
			}
			// New input once the version after the canary took over.
			waitFor(t, "the version after the canary", func() bool {
				info, _ = p.m.GetJob(ctx, job.ID)
				n := len(info.Versions)
				return n == 3 && (info.Versions[2].Outcome == VersionRunning || info.Versions[2].Outcome == VersionProbation)
			})
			p.publish(0, 20, 6000)
			info = p.versions(job.ID, tc.outcomes...)
			last := info.Versions[len(info.Versions)-1]
			want := map[string]string{"v1": v1, "v2": v2}[tc.after]
			if last.Change != tc.change || last.Canary != nil || info.Canary != nil || info.Modules[0].ID != want {
				t.Fatalf("after %s: job runs %+v, canary %+v, versions %+v; want %s", tc.name, info.Modules, info.Canary, info.Versions, want)
			}
			p.finish(job.ID, 21, 20)

			var wantFirsts []string
			for k := range 20 {
				key := fmt.Sprintf("k%02d", k)
				switch {
				case k < 12:
					wantFirsts = append(wantFirsts, dedupOutput("v1", key, 1000))
				case k < 16 && tc.canaryWrote && inCanary(k):
					wantFirsts = append(wantFirsts, dedupOutput("v2", key, 4000))
				case k < 16:
					wantFirsts = append(wantFirsts, dedupOutput("v1", key, 4000))
				default:
					wantFirsts = append(wantFirsts, dedupOutput(tc.after, key, 6000))
				}
			}
			wantFirsts = append(wantFirsts, dedupOutput(tc.after, "clock", 100000))
			slices.Sort(wantFirsts)
			if got := p.firsts(); !slices.Equal(got, wantFirsts) {
				t.Fatalf("dedup output\n%q\nwant\n%q", got, wantFirsts)
			}
			wantWindows := map[string]int{}
			for k := range 20 {
				wantWindows[fmt.Sprintf("k%02d@0", k)] = map[bool]int{true: 6, false: 3}[k < 12]
				if k >= 16 {
					wantWindows[fmt.Sprintf("k%02d@0", k)] = 1
				}
			}
			if got := p.windows(); !mapsEqual(got, wantWindows) {
				t.Fatalf("window counts %v, want %v", got, wantWindows)
			}
		})
	}
}

// A canary that does not fit is refused before the job is touched, naming
// canary.key_groups or what else differs; a canary while another switch
// is under way or runs, or a promotion or rollback without a canary, is a
// conflict.
func TestCanaryRefusals(t *testing.T) {
	p := newUpgradePlatform(t)
	ctx := context.Background()
	v1 := p.upload(wasmbuild.UDF(t, "dedup-c"))
	v2 := p.upload(wasmbuild.UDF(t, "dedup-v2"))
	job, err := p.m.SubmitJob(ctx, []byte(upgradeSpec(v1, 2, "fail")))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the job running", func() bool { return running(t, p.m, job.ID) })
	canary := func(module, keyGroups string) UpgradeRequest {
		return UpgradeRequest{Module: module, Canary: &CanaryRequest{KeyGroups: keyGroups}, Probation: Probation{Records: 1}}
	}
	invalid := []struct {
		name  string
		req   UpgradeRequest
		field string
		want  string
	}{
		{"malformed", canary(v2, "zero-15"), "canary.key_groups", `"zero-15" is not a range of key groups`},
		{"empty", canary(v2, ""), "canary.key_groups", "give a range of key groups"},
		{"negative", canary(v2, "-3"), "canary.key_groups", `"-3" is not a range`},
		{"reversed", canary(v2, "63-0"), "canary.key_groups", `"63-0" is reversed`},
		{"outside", canary(v2, "64-128"), "canary.key_groups", "outside the job's key groups, 0-127 (max_parallelism 128)"},
		{"splits a subtask", canary(v2, "0-15"), "canary.key_groups", `0-15 splits subtask 0 of "dedup" (key groups 0-63): a canary covers whole subtasks; "dedup"'s are 0-63, 64-127`},
		{"every subtask", canary(v2, "0-127"), "canary.key_groups", "covers every subtask"},
		{"same module", canary(v1, "0-63"), "canary", "nothing to run as a canary"},
		{"other parallelism", UpgradeRequest{Spec: upgradeSpec(v2, 4, "fail"), Canary: &CanaryRequest{KeyGroups: "0-63"}}, "canary", "a canary keeps the job's parallelism"},
	}
	for _, tc := range invalid {
		t.Run(tc.name, func(t *testing.T) {
			_, err := p.m.UpgradeJob(ctx, job.ID, tc.req)
			var je *JobError
			if !errors.As(err, &je) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want an invalid job with %q", err, tc.want)
			}
			if len(je.Problems) != 1 || je.Problems[0].Path != tc.field {
				t.Fatalf("problems %+v, want one naming %s", je.Problems, tc.field)
			}
		})
	}
	for name, op := range map[string]func() (SwitchInfo, error){
		"promote":  func() (SwitchInfo, error) { return p.m.PromoteJob(ctx, job.ID, PromoteRequest{}) },
		"rollback": func() (SwitchInfo, error) { return p.m.RollbackJob(ctx, job.ID) },
	} {
		if _, err := op(); !errors.Is(err, ErrNoCanary) {
			t.Fatalf("%s without a canary: %v, want %v", name, err, ErrNoCanary)
		}
	}
	if info, _ := p.m.GetJob(ctx, job.ID); len(info.Versions) != 1 || info.Canary != nil {
		t.Fatalf("job after refused canaries: versions %+v, canary %+v", info.Versions, info.Canary)
	}

	if _, err := p.m.UpgradeJob(ctx, job.ID, canary(v2, "64-127")); err != nil {
		t.Fatal(err)
	}
	// While the switch to the canary is pending or on probation, and
	// once it runs, no other switch starts.
	conflicts := map[string]func() (SwitchInfo, error){
		"canary":  func() (SwitchInfo, error) { return p.m.UpgradeJob(ctx, job.ID, canary(v2, "0-63")) },
		"upgrade": func() (SwitchInfo, error) { return p.m.UpgradeJob(ctx, job.ID, UpgradeRequest{Module: v2}) },
		"rescale": func() (SwitchInfo, error) { return p.m.RescaleJob(ctx, job.ID, RescaleRequest{Parallelism: 4}) },
	}
	for name, op := range conflicts {
		if _, err := op(); !errors.Is(err, ErrSwitchInProgress) {
			t.Fatalf("%s during the switch to a canary: %v, want %v", name, err, ErrSwitchInProgress)
		}
	}
	p.publish(0, 4, 1000)
	p.versions(job.ID, VersionReplaced, VersionRunning)
	for name, op := range conflicts {
		if _, err := op(); !errors.Is(err, ErrSwitchInProgress) || !strings.Contains(err.Error(), "runs a canary on key groups 64-127") {
			t.Fatalf("%s while a canary runs: %v, want %v naming the canary", name, err, ErrSwitchInProgress)
		}
	}
	if _, err := p.m.PromoteJob(ctx, job.ID, PromoteRequest{Probation{Time: "soon"}}); !errors.Is(err, ErrInvalidJob) || !strings.Contains(err.Error(), `probation.time: "soon"`) {
		t.Fatalf("promote with a bad probation: %v", err)
	}
}

// A platform that restarts while a committed canary runs resumes it on
// the same key groups, from its latest checkpoint: the keys there still
// get the new module's output, the others the old one's, exactly once.
func TestCanarySurvivesRestart(t *testing.T) {
	rp := newRecoveryPlatform(t)
	rp.stream("IN", "in")
	rp.stream("FIRSTS", "firsts")
	rp.stream("WINDOWS", "windows")
	p := &upgradePlatform{t: t, m: rp.m, js: rp.js}
	ctx := context.Background()
	v1 := p.upload(wasmbuild.UDF(t, "dedup-c"))
	v2 := p.upload(wasmbuild.UDF(t, "dedup-v2"))
	p.publish(0, 12, 1000, 2000, 3000)
	job, err := p.m.SubmitJob(ctx, []byte(upgradeSpec(v1, 2, "fail")))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the first outputs", func() bool { return running(t, p.m, job.ID) && len(p.firsts()) == 12 })
	if _, err := p.m.UpgradeJob(ctx, job.ID, UpgradeRequest{Module: v2, Canary: &CanaryRequest{KeyGroups: canaryKeyGroups}, Probation: Probation{Records: 1}}); err != nil {
		t.Fatal(err)
	}
	p.versions(job.ID, VersionReplaced, VersionProbation)
	p.publish(0, 16, 4000)
	p.versions(job.ID, VersionReplaced, VersionRunning)
	rp.stop()
	rp.start()
	p.m = rp.m
	info := p.versions(job.ID, VersionReplaced, VersionRunning)
	if info.Canary == nil || info.Canary.KeyGroups != canaryKeyGroups || info.Canary.Modules[0].ID != v2 || info.Modules[0].ID != v1 {
		t.Fatalf("resumed job runs %+v with canary %+v, want %s with %s on %s", info.Modules, info.Canary, v1, v2, canaryKeyGroups)
	}
	p.publish(0, 20, 5000)
	p.finish(job.ID, 21, 20)
	var want []string
	for k := range 20 {
		key := fmt.Sprintf("k%02d", k)
		switch {
		case k < 12:
			want = append(want, dedupOutput("v1", key, 1000))
		case k < 16 && inCanary(k):
			want = append(want, dedupOutput("v2", key, 4000))
		case k < 16:
			want = append(want, dedupOutput("v1", key, 4000))
		case inCanary(k):
			want = append(want, dedupOutput("v2", key, 5000))
		default:
			want = append(want, dedupOutput("v1", key, 5000))
		}
	}
	clock := "v1"
	if keyInCanary("clock") {
		clock = "v2"
	}
	want = append(want, dedupOutput(clock, "clock", 100000))
	slices.Sort(want)
	if got := p.firsts(); !slices.Equal(got, want) {
		t.Fatalf("dedup output\n%q\nwant\n%q", got, want)
	}
}

// A canary of a broadcast_process operator is refused: its subtasks' copies
// of the broadcast state would diverge under two versions.
func TestCanaryRefusesBroadcastState(t *testing.T) {
	m, _, mod := newRulesJob(t)
	ctx := context.Background()
	next, err := m.UploadModule(ctx, wasmbuild.UDF(t, "rules-rust"))
	if err != nil {
		t.Fatal(err)
	}
	job, err := m.SubmitJob(ctx, []byte(fmt.Sprintf(`
name: rules
checkpoint: {interval: 50ms}
sources:
  - {id: rules, jetstream: {stream: RULES}}
  - {id: events, jetstream: {stream: EVENTS}}
operators:
  - id: match
    parallelism: 2
    input: events
    key_by: {field: user}
    broadcast_process: {broadcast: rules, module: %s, process_element: match, process_broadcast: update}
sinks: [{id: out, input: match, jetstream: {subject: matches}}]
`, mod.ID)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = m.CancelJob(context.Background(), job.ID) })
	waitFor(t, "the job running", func() bool { return running(t, m, job.ID) })
	_, err = m.UpgradeJob(ctx, job.ID, UpgradeRequest{Module: next.ID, Canary: &CanaryRequest{KeyGroups: "0-63"}})
	var je *JobError
	if !errors.As(err, &je) || len(je.Problems) != 1 || je.Problems[0].Path != "canary" ||
		!strings.Contains(err.Error(), `canary: operators[0]: a broadcast_process operator cannot run a canary`) {
		t.Fatalf("error %v, want one problem at canary naming the broadcast_process operator", err)
	}
}
