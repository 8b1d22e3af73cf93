package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/checkpoint"
	"wasmstream.io/platform/connector"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/plan"
	"wasmstream.io/platform/runtime/spec"
)

// deadLetterNATS starts an embedded NATS server with a stream DLQ capturing
// the subject dlq.
func deadLetterNATS(t *testing.T) jetstream.JetStream {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, js := embeddedNATS(t)
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{
		Name: "DLQ", Subjects: []string{"dlq"}, Duplicates: time.Minute, Storage: jetstream.FileStorage,
	}); err != nil {
		t.Fatal(err)
	}
	return js
}

// deadLetterJob is a job dead-lettering to dlq whose only task is headed by
// the source named source.
func deadLetterJob(t *testing.T, js jetstream.JetStream, source string, parallelism int, mode string) *Job {
	t.Helper()
	j, err := spec.Parse(fmt.Appendf(nil, `
name: dl
parallelism: %d
checkpoint: {interval: 1h, mode: %s}
on_udf_error: dead_letter
dead_letter_subject: dlq
sources: [{id: %s, parallelism: %d, jetstream: {stream: IN, bounded: true}}]
sinks: [{id: out, input: %s, discard: true}]
`, parallelism, mode, source, parallelism, source))
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Build(j, func(string) (abi.Description, bool) { return abi.Description{}, false })
	if err != nil {
		t.Fatal(err)
	}
	return &Job{ID: "job1", Plan: p, Log: slog.New(slog.DiscardHandler),
		Env: &Env{JetStream: js, DataDir: t.TempDir(), Budgets: Budgets{}.WithDefaults()}}
}

// deadLetterTask builds subtask i of the job's task headed by source, with
// only its dead-letter sink.
func deadLetterTask(t *testing.T, b *builder, source string, i int) *Task {
	t.Helper()
	v := b.j.Plan.Vertex(source)
	task := &Task{name: v.ID, subtask: i}
	b.checkpointTask(task, v)
	dlq, err := b.deadLetters(context.Background(), task, v, i)
	if err != nil {
		t.Fatal(err)
	}
	task.dlq = dlq
	t.Cleanup(func() { _ = dlq.Close(context.Background()) })
	return task
}

// deadLetter sends record n of vertex m through the dead-letter policy.
func deadLetter(t *testing.T, task *Task, n int) {
	t.Helper()
	p := &operator.ErrorPolicy{Mode: operator.OnErrorDeadLetter, Vertex: "m", DeadLetter: task.dlq,
		Counts: &operator.ErrorCounts{}, Log: slog.New(slog.DiscardHandler)}
	rec := abi.Record{Key: fmt.Appendf(nil, "k%d", n), Value: fmt.Appendf(nil, "poison%d", n), Timestamp: int64(1000 + n),
		Headers: []abi.Header{{Name: []byte("Seq"), Value: []byte(strconv.Itoa(n))}}}
	if err := p.RecordFailed(context.Background(), &rec, errors.New("rejected poison")); err != nil {
		t.Fatal(err)
	}
}

// deadLetters reads the stream DLQ: each message's Seq header with its
// other headers.
func deadLetters(t *testing.T, js jetstream.JetStream) map[string]nats.Header {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, "DLQ")
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]nats.Header{}
	if info.State.Msgs == 0 {
		return out
	}
	cons, err := st.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	for read := uint64(0); read < info.State.Msgs; {
		batch, err := cons.Fetch(int(info.State.Msgs-read), jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		before := read
		for m := range batch.Messages() {
			read++
			seq := m.Headers().Get("Seq")
			if _, dup := out[seq]; dup {
				t.Fatalf("dead letter %s stored twice", seq)
			}
			if want := "poison" + seq; string(m.Data()) != want {
				t.Fatalf("dead letter %s: payload %q, want %q", seq, m.Data(), want)
			}
			out[seq] = m.Headers()
		}
		if read == before {
			t.Fatalf("read %d of %d dead letters", read, info.State.Msgs)
		}
	}
	return out
}

// checkDeadLetters: the stream holds exactly the dead letters want (Seq
// header to Nats-Msg-Id), each with the headers the policy and the sink add.
func checkDeadLetters(t *testing.T, js jetstream.JetStream, want map[string]string) {
	t.Helper()
	got := deadLetters(t, js)
	if len(got) != len(want) {
		t.Fatalf("stream holds %d dead letters, want %d", len(got), len(want))
	}
	for seq, id := range want {
		h, ok := got[seq]
		if !ok {
			t.Fatalf("dead letter %s missing", seq)
		}
		n, _ := strconv.Atoi(seq)
		for name, value := range map[string]string{
			nats.MsgIdHdr:             id,
			operator.HeaderError:      "rejected poison",
			operator.HeaderOperator:   "m",
			connector.HeaderKey:       "k" + seq,
			connector.HeaderTimestamp: strconv.Itoa(1000 + n),
		} {
			if h.Get(name) != value {
				t.Fatalf("dead letter %s: %s %q, want %q", seq, name, h.Get(name), value)
			}
		}
	}
}

// snapshotDeadLetters takes the task's checkpoint id and returns its
// dead-letter blob.
func snapshotDeadLetters(t *testing.T, task *Task, id int64) (string, []byte) {
	t.Helper()
	blobs, err := task.dlq.(*txSinkStage).snapshot(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if len(blobs) != 1 {
		t.Fatalf("%d blobs", len(blobs))
	}
	data, err := io.ReadAll(blobs[0].Reader)
	blobs[0].Release()
	if err != nil {
		t.Fatal(err)
	}
	return blobs[0].Name, data
}

// TestDeadLettersExactlyOnce: in an exactly-once job a task's dead letters
// are staged with its checkpoints, published with ids of their own when the
// checkpoint after them completes, and committed again, without a
// duplicate, by each restore of that checkpoint: by the same subtask, and by
// another task when the job's chains changed.
func TestDeadLettersExactlyOnce(t *testing.T) {
	ctx := context.Background()
	js := deadLetterNATS(t)
	j := deadLetterJob(t, js, "in", 2, plan.ModeExactlyOnce)
	b := &builder{j: j, run: &checkpointRun{j: j, exactlyOnce: true}}
	t0, t1 := deadLetterTask(t, b, "in", 0), deadLetterTask(t, b, "in", 1)
	for n := range 5 {
		deadLetter(t, t0, n)
	}
	for n := 10; n < 13; n++ {
		deadLetter(t, t1, n)
	}
	if got := deadLetters(t, js); len(got) != 0 {
		t.Fatalf("%d dead letters published before any checkpoint", len(got))
	}
	name0, data0 := snapshotDeadLetters(t, t0, 1)
	name1, data1 := snapshotDeadLetters(t, t1, 1)
	if name0 != "deadletters~in[0]" || name1 != "deadletters~in[1]" {
		t.Fatalf("blobs %q and %q", name0, name1)
	}
	// After the barrier: in the next epoch, which no checkpoint holds.
	deadLetter(t, t0, 5)
	s0 := t0.dlq.(*txSinkStage)
	if !s0.staged() {
		t.Fatal("staged dead letters not reported")
	}
	if got := deadLetters(t, js); len(got) != 0 {
		t.Fatalf("%d dead letters published before checkpoint 1 completed", len(got))
	}
	// Checkpoint 1 completes; subtask 1 fails before it commits.
	if err := s0.commit(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := s0.flush(ctx); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for n := range 5 {
		want[strconv.Itoa(n)] = "job1.$dlq.in.0.1." + strconv.Itoa(n)
	}
	checkDeadLetters(t, js, want)
	if s0.sink.Pending() != 0 || s0.sink.Staged() != 1 {
		t.Fatalf("after the commit: %d epochs pending, %d dead letters staged", s0.sink.Pending(), s0.sink.Staged())
	}

	store := checkpoint.NewDirStore(t.TempDir())
	meta := &checkpoint.Metadata{Job: "job1", ID: 1, Kind: checkpoint.KindCheckpoint, Created: time.Now(), Blobs: map[string]checkpoint.Blob{}}
	for name, data := range map[string][]byte{name0: data0, name1: data1} {
		ref, err := store.PutBlob(ctx, "job1", 1, name, data)
		if err != nil {
			t.Fatal(err)
		}
		meta.Blobs[name] = ref
	}
	for n := 10; n < 13; n++ {
		want[strconv.Itoa(n)] = "job1.$dlq.in.1.1." + strconv.Itoa(n-10)
	}
	// Restored twice, as after a failure during the first recovery: each
	// subtask commits its own dead letters, and only the missing ones are
	// stored.
	for range 2 {
		rb := &builder{j: j, run: &checkpointRun{j: j, exactlyOnce: true}, restore: NewRestoreSet(store, meta, false)}
		r0, r1 := deadLetterTask(t, rb, "in", 0), deadLetterTask(t, rb, "in", 1)
		checkDeadLetters(t, js, want)
		for i, r := range []*Task{r0, r1} {
			if s := r.dlq.(*txSinkStage).sink; s.Committed() != 1 || s.Pending() != 0 {
				t.Fatalf("restored subtask %d: %d epochs committed, %d pending", i, s.Committed(), s.Pending())
			}
		}
	}
	// A job whose chain is headed by another vertex, with one subtask:
	// its first task commits the dead letters of both old subtasks.
	other := deadLetterJob(t, js, "src", 1, plan.ModeExactlyOnce)
	rb := &builder{j: other, run: &checkpointRun{j: other, exactlyOnce: true}, restore: NewRestoreSet(store, meta, true)}
	r := deadLetterTask(t, rb, "src", 0)
	checkDeadLetters(t, js, want)
	if s := r.dlq.(*txSinkStage).sink; s.Committed() != 2 {
		t.Fatalf("the new task committed %d epochs, want 2", s.Committed())
	}
	// Its own dead letters have a prefix of their own.
	deadLetter(t, r, 20)
	snapshotDeadLetters(t, r, 2)
	if err := r.dlq.(*txSinkStage).commit(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if err := r.dlq.(*txSinkStage).flush(ctx); err != nil {
		t.Fatal(err)
	}
	want["20"] = "job1.$dlq.src.0.2.0"
	checkDeadLetters(t, js, want)
}

// TestDeadLettersAtLeastOnce: without exactly-once checkpoints a dead letter
// is published at once, without a message id.
func TestDeadLettersAtLeastOnce(t *testing.T) {
	js := deadLetterNATS(t)
	j := deadLetterJob(t, js, "in", 1, plan.ModeAtLeastOnce)
	for _, run := range []*checkpointRun{nil, {j: j}} {
		task := deadLetterTask(t, &builder{j: j, run: run}, "in", 0)
		if _, ok := task.dlq.(*sinkStage); !ok {
			t.Fatalf("dead-letter sink %T, want a plain sink", task.dlq)
		}
		if run != nil && len(task.cp.parts) != 0 {
			t.Fatalf("%d checkpoint participants", len(task.cp.parts))
		}
	}
	task := deadLetterTask(t, &builder{j: j, run: &checkpointRun{j: j}}, "in", 0)
	deadLetter(t, task, 7)
	if err := task.dlq.Finish(context.Background()); err != nil {
		t.Fatal(err)
	}
	checkDeadLetters(t, js, map[string]string{"7": ""})
}

func TestParseDeadLetterBlob(t *testing.T) {
	for _, tt := range []struct {
		name    string
		head    string
		subtask int
		ok      bool
	}{
		{deadLetterBlob("in", 3), "in", 3, true},
		{deadLetterBlob("a.b-c_d", 12), "a.b-c_d", 12, true},
		{"deadletters~in", "", 0, false},
		{"deadletters~[2]", "", 0, false},
		{"deadletters~in[-1]", "", 0, false},
		{"deadletters~in[x]", "", 0, false},
		{"sink~in~0", "", 0, false},
	} {
		head, subtask, ok := parseDeadLetterBlob(tt.name)
		if head != tt.head || subtask != tt.subtask || ok != tt.ok {
			t.Errorf("parseDeadLetterBlob(%q) = %q, %d, %v; want %q, %d, %v", tt.name, head, subtask, ok, tt.head, tt.subtask, tt.ok)
		}
	}
}
