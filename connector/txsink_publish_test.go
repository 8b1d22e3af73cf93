package connector

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/abi"
)

// TestTxSinkCommitFailures: a commit JetStream refuses fails the sink with
// the server's reason, naming the subject.
func TestTxSinkCommitFailures(t *testing.T) {
	tests := []struct {
		name string
		// spoil runs after the sink is created and before the commit.
		spoil func(t *testing.T, ts *testServer)
		value []byte
		check func(error) bool
	}{
		{
			name: "stream deleted",
			spoil: func(t *testing.T, ts *testServer) {
				if err := ts.js.DeleteStream(testCtx(t), "TX"); err != nil {
					t.Fatal(err)
				}
			},
			value: []byte("v"),
			check: func(err error) bool { return errors.Is(err, jetstream.ErrNoStreamResponse) },
		},
		{
			name:  "message too large",
			spoil: func(*testing.T, *testServer) {},
			value: bytes.Repeat([]byte("x"), 1024),
			check: func(err error) bool {
				var apiErr *jetstream.APIError
				return errors.As(err, &apiErr) && apiErr.ErrorCode == jetstream.JSErrCodeStreamMessageExceedsMaximum
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := startServer(t)
			ctx := testCtx(t)
			if _, err := ts.js.CreateStream(ctx, jetstream.StreamConfig{
				Name: "TX", Subjects: []string{"tx.>"}, MaxMsgSize: 512, Storage: jetstream.FileStorage,
			}); err != nil {
				t.Fatal(err)
			}
			s := newTxSink(t, ts, TxSinkConfig{Subject: "tx.out", Prefix: "job.out.0"})
			tt.spoil(t, ts)
			if err := s.Write(ctx, []abi.Record{{Value: tt.value}}); err != nil {
				t.Fatal(err)
			}
			if err := s.Seal(1); err != nil {
				t.Fatal(err)
			}
			// Commit reports a failure the committer has already met,
			// Flush one it meets later: which depends on timing.
			err := s.Commit(ctx, 1)
			if err == nil {
				err = s.Flush(ctx)
			}
			if !tt.check(err) || !strings.Contains(err.Error(), `publish to "tx.out"`) {
				t.Fatalf("Commit or Flush = %v", err)
			}
			if s.Committed() != 0 || s.Pending() != 1 {
				t.Fatalf("committed %d pending %d after a failed commit", s.Committed(), s.Pending())
			}
		})
	}
}

// TestTxSinkCommitLargerThanTheWindow commits epochs of more messages than
// MaxInFlight, so that the committer waits for acknowledgements mid-epoch.
func TestTxSinkCommitLargerThanTheWindow(t *testing.T) {
	ts := startServer(t)
	newTxStream(t, ts, time.Minute)
	ctx := testCtx(t)
	s := newTxSink(t, ts, TxSinkConfig{Subject: "tx.out", Prefix: "job.out.0", MaxInFlight: 7})
	for epoch := int64(1); epoch <= 3; epoch++ {
		if err := s.Write(ctx, txRecords(int(epoch-1)*1000, 1000)); err != nil {
			t.Fatal(err)
		}
		if err := s.Seal(epoch); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Commit(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if s.Committed() != 3 || s.Pending() != 0 {
		t.Fatalf("committed %d pending %d", s.Committed(), s.Pending())
	}
	checkExactlyOnce(t, ts, 3000)
}

// FuzzAckError: any acknowledgement decodes without panicking, and one that
// does not mention "error" is a success.
func FuzzAckError(f *testing.F) {
	for _, seed := range []string{
		`{"stream":"TX","seq":1}`,
		`{"stream":"TX","seq":2,"duplicate":true}`,
		`{"error":{"code":400,"err_code":10054,"description":"message size exceeds maximum allowed"},"stream":"TX","seq":0}`,
		`{"error":null}`,
		`{"error"`,
		``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		err := ackError(&nats.Msg{Data: data})
		if len(data) > 0 && !bytes.Contains(data, []byte(`"error"`)) && err != nil {
			t.Fatalf("ackError(%q) = %v", data, err)
		}
		if len(data) == 0 && err == nil {
			t.Fatal("an empty acknowledgement without a status passed")
		}
	})
}

// TestTxSinkCloseWaitsForWhatIsInFlight: a sink closed (its run cancelled,
// as when another subtask fails) while its commit has messages on their way
// to a stream that refuses them returns only once the stream has answered
// each. Lifting the stream's limit right after Close then stores none of
// them: none can land after what a recovery sends first.
func TestTxSinkCloseWaitsForWhatIsInFlight(t *testing.T) {
	ts := startServer(t)
	ctx := testCtx(t)
	cfg := jetstream.StreamConfig{Name: "TX", Subjects: []string{"tx.>"}, MaxMsgs: 100, Discard: jetstream.DiscardNew, Storage: jetstream.FileStorage}
	if _, err := ts.js.CreateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	s := newTxSink(t, ts, TxSinkConfig{Subject: "tx.out", Prefix: "job.out.0", MaxInFlight: 8192})
	if err := startCommit(ctx, s, 1, txRecords(0, 20000)); err != nil {
		t.Fatal(err)
	}
	st, err := ts.js.Stream(ctx, "TX")
	if err != nil {
		t.Fatal(err)
	}
	// Close once the commit has gone past its first message, one at a
	// time, to the window.
	for {
		info, err := st.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if info.State.Msgs > 0 {
			break
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	closed, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxMsgs = -1
	if _, err := ts.js.UpdateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != closed.State.Msgs {
		t.Fatalf("the stream holds %d messages, %d when Close returned: %d landed after it", info.State.Msgs, closed.State.Msgs, info.State.Msgs-closed.State.Msgs)
	}
}
