package exec

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"wasmstream.io/platform/checkpoint"
	"wasmstream.io/platform/runtime/plan"
	"wasmstream.io/platform/runtime/spec"
)

var errLeaseMoved = errors.New("the job's lease has moved")

// fakeLineage counts the ids it is told count and those completed through
// it, refuses completions from refuseFrom on (0: none) as if the lease had
// moved then, and allocates ids from next on.
type fakeLineage struct {
	refuseFrom int64

	mu        sync.Mutex
	next      int64
	counts    map[int64]bool
	triggered []int64
}

func newFakeLineage(next int64, counts ...int64) *fakeLineage {
	l := &fakeLineage{next: next, counts: map[int64]bool{}}
	for _, id := range counts {
		l.counts[id] = true
	}
	return l
}

func (l *fakeLineage) Trigger(_ context.Context, id int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.triggered = append(l.triggered, id)
	l.next = max(l.next, id+1)
	return nil
}

func (l *fakeLineage) Complete(_ context.Context, id int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.refuseFrom > 0 && id >= l.refuseFrom {
		return errLeaseMoved
	}
	l.counts[id] = true
	return nil
}

func (l *fakeLineage) Counts(id int64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.counts[id]
}

func (l *fakeLineage) NextID() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.next
}

// storedCheckpoint is a checkpoint a test puts in the store: whole, with a
// blob missing, or with metadata that does not decode.
type storedCheckpoint struct {
	job     string
	id      int64
	kind    checkpoint.Kind
	corrupt string // "", "blob" or "metadata"
}

func putCheckpoint(t *testing.T, root string, store checkpoint.Store, c storedCheckpoint) {
	t.Helper()
	ctx := context.Background()
	if c.corrupt == "metadata" {
		dir := filepath.Join(root, c.job, strconv.FormatInt(c.id, 10))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "_metadata"), []byte(`{"job":`), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	ref, err := store.PutBlob(ctx, c.job, c.id, "positions~in~0", []byte(`{">":3}`))
	if err != nil {
		t.Fatal(err)
	}
	blobs := map[string]checkpoint.Blob{ref.Name: ref}
	if c.corrupt == "blob" {
		blobs["positions~in~1"] = checkpoint.Blob{Name: "positions~in~1", Size: ref.Size, SHA256: ref.SHA256}
	}
	kind := c.kind
	if kind == "" {
		kind = checkpoint.KindCheckpoint
	}
	m := &checkpoint.Metadata{Job: c.job, ID: c.id, Kind: kind, Created: time.Now(), Blobs: blobs}
	if err := store.Commit(ctx, m); err != nil {
		t.Fatal(err)
	}
}

// TestLatestOwnLineage: with a Lineage, a restore passes over the job's
// stored checkpoints that do not count, silently (whether they are whole or
// corrupt), and restores the newest usable one that counts; the savepoint
// the job was submitted from is restored regardless.
func TestLatestOwnLineage(t *testing.T) {
	ok := func(ids ...int64) []storedCheckpoint {
		var out []storedCheckpoint
		for _, id := range ids {
			out = append(out, storedCheckpoint{job: "job1", id: id})
		}
		return out
	}
	for _, tt := range []struct {
		name   string
		stored []storedCheckpoint
		// counts are the ids that count; nil: no Lineage.
		counts []int64
		from   *SavepointRef
		// want is the job and id restored, "" for none.
		want string
		// wantErr: a *RestoreError of this checkpoint.
		wantErr int64
		// unusable is how many checkpoints are reported not usable, passed
		// how many are passed over as not the job's.
		unusable, passed int
	}{
		{name: "no lineage", stored: ok(1, 2, 3), want: "job1-3"},
		{name: "no lineage, corrupt newest", stored: append(ok(1, 2), storedCheckpoint{job: "job1", id: 3, corrupt: "blob"}),
			want: "job1-2", unusable: 1},
		{name: "newest counting", stored: ok(1, 2, 3, 4, 5), counts: []int64{1, 2, 3}, want: "job1-3", passed: 2},
		{name: "counting savepoint", stored: append(ok(1, 2), storedCheckpoint{job: "job1", id: 3, kind: checkpoint.KindSavepoint}, storedCheckpoint{job: "job1", id: 4}),
			counts: []int64{1, 3}, want: "job1-3", passed: 2},
		{name: "none counts", stored: ok(1, 2), counts: []int64{}, passed: 2},
		{name: "corrupt ones not counting are no reason to fall back",
			stored: append(ok(2), storedCheckpoint{job: "job1", id: 3, corrupt: "metadata"}, storedCheckpoint{job: "job1", id: 4, corrupt: "blob"}),
			counts: []int64{2}, want: "job1-2", passed: 2},
		{name: "corrupt counting one falls back",
			stored: append(ok(1, 2), storedCheckpoint{job: "job1", id: 3, corrupt: "blob"}, storedCheckpoint{job: "job1", id: 4, corrupt: "metadata"}, storedCheckpoint{job: "job1", id: 5}),
			counts: []int64{1, 3}, want: "job1-1", unusable: 1, passed: 3},
		{name: "no counting one usable",
			stored: []storedCheckpoint{{job: "job1", id: 1, corrupt: "blob"}, {job: "job1", id: 2, corrupt: "metadata"}, {job: "job1", id: 3}},
			counts: []int64{1, 2}, wantErr: 2, unusable: 2, passed: 1},
		{name: "submitted-from savepoint regardless of the lineage",
			stored: []storedCheckpoint{{job: "other", id: 1, kind: checkpoint.KindSavepoint}, {job: "job1", id: 2}},
			counts: []int64{}, from: &SavepointRef{Job: "other", ID: 1}, want: "other-1", passed: 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			store := checkpoint.NewDirStore(root)
			for _, c := range tt.stored {
				putCheckpoint(t, root, store, c)
			}
			var logs bytes.Buffer
			cp := NewCheckpoints(&spec.Checkpoint{}, store, tt.from, false)
			cp.Log = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			if tt.counts != nil {
				cp.Lineage = newFakeLineage(1, tt.counts...)
			}
			r, err := cp.latest(context.Background(), "job1")
			var restoreErr *RestoreError
			switch {
			case tt.wantErr > 0:
				if !errors.As(err, &restoreErr) || restoreErr.Checkpoint != tt.wantErr {
					t.Fatalf("latest: %v, %v; want a RestoreError of checkpoint %d", r, err, tt.wantErr)
				}
			case err != nil:
				t.Fatalf("latest: %v", err)
			case tt.want == "" && r != nil:
				t.Fatalf("restores %s-%d, want none", r.meta.Job, r.meta.ID)
			case tt.want != "" && (r == nil || (SavepointRef{Job: r.meta.Job, ID: r.meta.ID}).String() != tt.want):
				t.Fatalf("restores %+v, want %s", r, tt.want)
			}
			log := logs.String()
			if n := strings.Count(log, "checkpoint not usable"); n != tt.unusable {
				t.Errorf("%d checkpoints not usable, want %d:\n%s", n, tt.unusable, log)
			}
			if n := strings.Count(log, "level=DEBUG msg=\"checkpoint not in the job's lineage, passed over\""); n != tt.passed {
				t.Errorf("%d checkpoints passed over, want %d:\n%s", n, tt.passed, log)
			}
			if older := strings.Contains(log, "restoring an older checkpoint"); older != (tt.unusable > 0 && tt.want != "") {
				t.Errorf("warned of restoring an older checkpoint: %t:\n%s", older, log)
			}
		})
	}
}

// TestFirstID: the first checkpoint of a run comes after those of earlier
// runs and the one it restores, and never before the Lineage's NextID.
func TestFirstID(t *testing.T) {
	for _, tt := range []struct {
		name    string
		earlier int64 // the next id after the earlier runs, 0 for none
		restore *checkpoint.Metadata
		lineage int64 // the Lineage's NextID, 0 for no Lineage
		want    int64
	}{
		{name: "first run", want: 1},
		{name: "after an earlier run", earlier: 4, want: 4},
		{name: "restores its own", earlier: 4, restore: &checkpoint.Metadata{Job: "job1", ID: 7}, want: 8},
		{name: "restores another job's savepoint", restore: &checkpoint.Metadata{Job: "other", ID: 7}, want: 1},
		{name: "an earlier owner allocated more", restore: &checkpoint.Metadata{Job: "job1", ID: 7}, lineage: 12, want: 12},
		{name: "lineage behind the restore", restore: &checkpoint.Metadata{Job: "job1", ID: 7}, lineage: 3, want: 8},
		{name: "lineage behind an earlier run", earlier: 10, lineage: 9, want: 10},
		{name: "lineage of a new job", lineage: 1, want: 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cp := NewCheckpoints(&spec.Checkpoint{}, checkpoint.NewDirStore(t.TempDir()), nil, false)
			cp.nextID = tt.earlier
			if tt.lineage > 0 {
				cp.Lineage = newFakeLineage(tt.lineage)
			}
			var r *RestoreSet
			if tt.restore != nil {
				r = NewRestoreSet(cp.Store, tt.restore, false)
			}
			if got := cp.firstID("job1", r); got != tt.want {
				t.Fatalf("first id %d, want %d", got, tt.want)
			}
		})
	}
}

// TestRunFencedByLineage: a run's coordinator takes its ids through the
// Lineage from its NextID on and completes through it; once completions are
// refused (the lease moved) its checkpoints leave nothing a restore finds,
// and the next restore is the last one that counted.
func TestRunFencedByLineage(t *testing.T) {
	ctx := context.Background()
	store := checkpoint.NewDirStore(t.TempDir())
	cfg := &spec.Checkpoint{Interval: spec.Duration{Duration: 5 * time.Millisecond}, Mode: plan.ModeExactlyOnce,
		Timeout: spec.Duration{Duration: time.Minute}, Retain: 3}
	j := &Job{ID: "job1", Log: slog.New(slog.DiscardHandler)}
	j.Checkpoints = NewCheckpoints(cfg, store, nil, false)
	j.Checkpoints.Log = j.Log
	lineage := newFakeLineage(10)
	lineage.refuseFrom = 12
	j.Checkpoints.Lineage = lineage
	first := j.Checkpoints.firstID(j.ID, nil)
	if first != 10 {
		t.Fatalf("first id %d, want 10", first)
	}
	stop := j.newCheckpointRun().start(ctx, nil, first)
	h := j.Checkpoints.History
	for id := int64(10); id <= 13; id++ {
		wctx, cancel := context.WithTimeout(ctx, time.Minute)
		var (
			s   checkpoint.Stats
			err error
		)
		for {
			if s, err = h.Wait(wctx, id); !errors.Is(err, checkpoint.ErrNotFound) {
				break
			}
			time.Sleep(time.Millisecond)
		}
		cancel()
		if err != nil {
			t.Fatalf("checkpoint %d: %v", id, err)
		}
		fenced := id >= lineage.refuseFrom
		if fenced && (s.Status != checkpoint.StatusFailed || s.FailureReason != checkpoint.ReasonFenced) ||
			!fenced && s.Status != checkpoint.StatusCompleted {
			t.Fatalf("checkpoint %d: %+v", id, s)
		}
	}
	stop()
	lineage.mu.Lock()
	triggered := slices.Clone(lineage.triggered)
	lineage.mu.Unlock()
	if len(triggered) < 4 || !slices.Equal(triggered[:4], []int64{10, 11, 12, 13}) {
		t.Fatalf("lineage triggered %v, want 10 to 13 first", triggered)
	}
	all, err := store.List(ctx, j.ID)
	if err != nil || len(all) != 2 || all[0].ID != 10 || all[1].ID != 11 {
		t.Fatalf("store lists %v, %v; want checkpoints 10 and 11", all, err)
	}
	r, err := j.Checkpoints.latest(ctx, j.ID)
	if err != nil || r == nil || r.meta.ID != 11 {
		t.Fatalf("latest %+v, %v; want checkpoint 11", r, err)
	}
	if next := j.Checkpoints.firstID(j.ID, r); next != lineage.NextID() || next <= triggered[len(triggered)-1] {
		t.Fatalf("next run's first id %d, lineage's NextID %d, last triggered %d", next, lineage.NextID(), triggered[len(triggered)-1])
	}
}
