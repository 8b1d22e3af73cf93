package join

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"testing"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/operator/optest"
	"wasmstream.io/platform/runtime/plan"
	"wasmstream.io/platform/state"
)

// TestIntervalJoinSnapshotRestoreMatchesUninterrupted runs each case's
// steps once straight through and once with a snapshot after step cut,
// restored into a new join that takes the remaining steps: the output after
// the cut is the same, and so is the late output.
func TestIntervalJoinSnapshotRestoreMatchesUninterrupted(t *testing.T) {
	bothModes(t, func(t *testing.T) {
		tests := []struct {
			name  string
			plan  plan.Join
			steps []optest.JoinStep
			cut   int
		}{
			{
				name:  "both sides buffered across the cut",
				plan:  plan.Join{Interval: true, Lower: -2, Upper: 3},
				steps: []optest.JoinStep{"L a@10 1; b@11 2", "R a@9 3; b@12 4", "wm 5", "L a@12 5", "R a@13 6; b@14 7", "wm max"},
				cut:   3,
			},
			{
				name:  "watermark restored: records at or below it are late",
				plan:  plan.Join{Interval: true, Lower: 0, Upper: 5},
				steps: []optest.JoinStep{"L a@10 1", "wm 12", "R a@12 2; a@13 3", "L a@11 4; a@15 5", "wm max"},
				cut:   2,
			},
			{
				name:  "pruned records stay pruned",
				plan:  plan.Join{Interval: true, Lower: 0, Upper: 2},
				steps: []optest.JoinStep{"L a@1 1; a@8 2", "wm 4", "R a@3 3; a@9 4", "wm max"},
				cut:   2,
			},
			{
				name:  "allowed lateness and several records per key",
				plan:  plan.Join{Interval: true, Lower: -3, Upper: 3, Lateness: 4},
				steps: []optest.JoinStep{"L k@5 1; k@6 2; k@7 3", "R k@4 4", "wm 8", "R k@9 5; k@2 6", "L k@10 7", "wm max"},
				cut:   3,
			},
			{
				name:  "empty join",
				plan:  plan.Join{Interval: true, Lower: 0, Upper: 1},
				steps: []optest.JoinStep{"L a@1 1", "R a@2 2", "wm max"},
				cut:   0,
			},
		}
		ctx := context.Background()
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				wantOut, wantLate := &optest.Tape{}, &optest.Tape{}
				whole, _ := testIntervalJoin(&tc.plan, 1<<20, wantOut, wantLate)
				applyJoinSteps(t, ctx, whole, tc.steps[:tc.cut])
				outBefore, lateBefore := len(wantOut.Lines), len(wantLate.Lines)
				applyJoinSteps(t, ctx, whole, tc.steps[tc.cut:])

				first, _ := testIntervalJoin(&tc.plan, 1<<20, &optest.Tape{}, &optest.Tape{})
				applyJoinSteps(t, ctx, first, tc.steps[:tc.cut])
				snap := first.encode()
				gotOut, gotLate := &optest.Tape{}, &optest.Tape{}
				second, _ := testIntervalJoin(&tc.plan, 1<<20, gotOut, gotLate)
				if err := second.Restore(context.Background(), []io.Reader{bytes.NewReader(snap)}, 128, state.RangeOf(128, 1, 0)); err != nil {
					t.Fatal(err)
				}
				if second.wm != first.wm || second.used != first.used {
					t.Fatalf("restored watermark %d and %d bytes, want %d and %d", second.wm, second.used, first.wm, first.used)
				}
				applyJoinSteps(t, ctx, second, tc.steps[tc.cut:])
				optest.CheckLines(t, "output", gotOut.Lines, wantOut.Lines[outBefore:])
				optest.CheckLines(t, "late", gotLate.Lines, wantLate.Lines[lateBefore:])
			})
		}
	})
}

func applyJoinSteps(t *testing.T, ctx context.Context, j *Interval, steps []optest.JoinStep) {
	t.Helper()
	for _, st := range steps {
		if err := st.Apply(ctx, j, j.inputs); err != nil {
			t.Fatalf("%s: %v", st, err)
		}
	}
}

// TestIntervalJoinRescaleKeepsEveryRecordOnce fills the joins of 3 subtasks
// with the records of the keys each owns, snapshots them, and restores the
// snapshots at parallelism 1, 2, 3 and 5: across the new subtasks every key
// is held by exactly one subtask, with exactly its records on each side.
func TestIntervalJoinRescaleKeepsEveryRecordOnce(t *testing.T) {
	bothModes(t, func(t *testing.T) {
		const maxP, oldP, keys = 128, 3, 200
		ctx := context.Background()
		plan := &plan.Join{Interval: true, Lower: -100, Upper: 100}
		want := map[string][2]int{}
		var snaps [][]byte
		for sub := range oldP {
			j, _ := testIntervalJoin(plan, 1<<24, &optest.Tape{}, nil)
			rng := state.RangeOf(maxP, oldP, sub)
			for k := range keys {
				key := fmt.Sprintf("user-%d", k)
				if !rng.Contains(state.KeyGroup([]byte(key), maxP)) {
					continue
				}
				n := [2]int{k%4 + 1, k % 3}
				for side := range 2 {
					j.inputs.From(side)
					recs := make([]abi.Record, n[side])
					for r := range recs {
						recs[r] = abi.Record{Key: []byte(key), Value: fmt.Appendf(nil, "%d", r), Timestamp: int64(1000 + r)}
					}
					if err := j.Process(ctx, recs); err != nil {
						t.Fatal(err)
					}
				}
				want[key] = n
			}
			if err := j.Advance(ctx, int64(500+sub)); err != nil {
				t.Fatal(err)
			}
			snaps = append(snaps, j.encode())
		}
		for _, newP := range []int{1, 2, 3, 5} {
			t.Run(fmt.Sprintf("parallelism %d", newP), func(t *testing.T) {
				got := map[string][2]int{}
				var used int64
				for sub := range newP {
					j, _ := testIntervalJoin(plan, 1<<24, &optest.Tape{}, nil)
					srcs := make([]io.Reader, len(snaps))
					for i, s := range snaps {
						srcs[i] = bytes.NewReader(s)
					}
					rng := state.RangeOf(maxP, newP, sub)
					if err := j.Restore(context.Background(), srcs, maxP, rng); err != nil {
						t.Fatal(err)
					}
					if j.wm != 500 {
						t.Errorf("subtask %d: watermark %d, want the lowest snapshot's, 500", sub, j.wm)
					}
					for side := range j.sides {
						for key, recs := range j.sides[side].byKey() {
							if !rng.Contains(state.KeyGroup([]byte(key), maxP)) {
								t.Errorf("subtask %d holds key %s of another subtask", sub, key)
							}
							n := got[key]
							n[side] += len(recs)
							got[key] = n
						}
					}
					used += j.used
				}
				for key, n := range want {
					if got[key] != n {
						t.Errorf("key %s: %v records restored, want %v", key, got[key], n)
					}
				}
				if extra := slices.DeleteFunc(slices.Collect(maps.Keys(got)), func(k string) bool { _, ok := want[k]; return ok }); len(extra) > 0 {
					t.Errorf("restored keys nobody had: %v", extra)
				}
				var wantUsed int64
				for key, n := range want {
					wantUsed += int64((n[0] + n[1]) * (len(key) + 1 + joinRecOverhead))
				}
				if used != wantUsed {
					t.Errorf("restored joins use %d bytes, want %d", used, wantUsed)
				}
			})
		}
	})
}

func TestIntervalJoinRestoreErrors(t *testing.T) {
	bothModes(t, func(t *testing.T) {
		plan := &plan.Join{Interval: true, Lower: 0, Upper: 10}
		full, _ := testIntervalJoin(plan, 1<<20, &optest.Tape{}, nil)
		if err := optest.Step("a@1 1; a@2 2; a@3 3").Apply(context.Background(), full); err != nil {
			t.Fatal(err)
		}
		good := full.encode()
		future := append([]byte(joinMagic), joinVersion+1)
		tests := []struct {
			name  string
			data  []byte
			limit int64
			want  string
		}{
			{"not a snapshot", []byte("WSWN\x01"), 1 << 20, "operator[join]: interval join snapshot 0: not an interval join snapshot"},
			{"unknown version", future, 1 << 20, "operator[join]: interval join snapshot 0: interval join snapshot version 2, want 1"},
			{"truncated header", good[:7], 1 << 20, "operator[join]: interval join snapshot 0: truncated"},
			{"truncated record", good[:len(good)-5], 1 << 20, "operator[join]: interval join snapshot 0: left side: truncated"},
			{"trailing bytes", append(slices.Clip(good), 0), 1 << 20, "operator[join]: interval join snapshot 0: 1 bytes after the last record"},
			{"over the budget", good, 100, `operator[join]: join state exceeds its budget of 100 bytes (record key "a")`},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				j, _ := testIntervalJoin(plan, tc.limit, &optest.Tape{}, nil)
				err := j.Restore(context.Background(), []io.Reader{bytes.NewReader(tc.data)}, 128, state.RangeOf(128, 1, 0))
				if err == nil || err.Error() != tc.want {
					t.Fatalf("err = %v, want %s", err, tc.want)
				}
			})
		}
	})
}

// FuzzJoinSnapshot decodes arbitrary bytes: the decoder never panics, and
// what it accepts encodes again to a snapshot with the same records.
func FuzzJoinSnapshot(f *testing.F) {
	plan := &plan.Join{Interval: true, Lower: -5, Upper: 5}
	seed, _ := testIntervalJoin(plan, 1<<20, &optest.Tape{}, nil)
	ctx := context.Background()
	for _, st := range []optest.JoinStep{"L a@1 x; b@2 y", "R a@3 z", "wm 0"} {
		if err := st.Apply(ctx, seed, seed.inputs); err != nil {
			f.Fatal(err)
		}
	}
	f.Add(seed.encode())
	f.Add(binary.LittleEndian.AppendUint32(append([]byte(joinMagic), joinVersion, 0, 0, 0, 0, 0, 0, 0, 0), 1<<31))
	f.Add([]byte(joinMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		j, _ := testIntervalJoin(plan, 1<<20, &optest.Tape{}, nil)
		if err := j.Restore(context.Background(), []io.Reader{bytes.NewReader(data)}, 128, state.RangeOf(128, 1, 0)); err != nil {
			if !strings.HasPrefix(err.Error(), "operator[join]: ") {
				t.Fatalf("error without the operator: %v", err)
			}
			return
		}
		again, _ := testIntervalJoin(plan, 1<<20, &optest.Tape{}, nil)
		if err := again.Restore(context.Background(), []io.Reader{bytes.NewReader(j.encode())}, 128, state.RangeOf(128, 1, 0)); err != nil {
			t.Fatalf("restore of a re-encoded snapshot: %v", err)
		}
		if again.wm != j.wm || again.used != j.used || !sameJoinBuffers(again, j) {
			t.Fatalf("re-encoded snapshot differs")
		}
	})
}

// sameJoinBuffers reports whether two joins buffer the same records.
func sameJoinBuffers(a, b *Interval) bool {
	for side := range a.sides {
		ka, kb := a.sides[side].byKey(), b.sides[side].byKey()
		if len(ka) != len(kb) {
			return false
		}
		for key, ra := range ka {
			rb, ok := kb[key]
			if !ok || !slices.EqualFunc(ra, rb, func(x, y joinRec) bool { return x.ts == y.ts && bytes.Equal(x.value, y.value) }) {
				return false
			}
		}
	}
	return true
}
