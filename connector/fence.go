package connector

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
)

// ErrFenced is a fenced sink's commit that JetStream refused because
// another owner has taken the sink's fence since: the sink must stop, its
// output belongs to the new owner.
var ErrFenced = errors.New("sink is fenced: another owner took its fence")

// fencePrefix starts every fence subject; the sink stream's name follows,
// then the key.
const fencePrefix = "_platform.fence."

// The conflicts TakeFence retries (another owner fenced between its read
// and its write) and its wait before the first retry, doubling after each;
// how long it goes on trying while another conditional write on the fence
// subject is in progress or no stream answers on it yet, waiting about
// fenceBusyWait between tries.
const (
	fenceRetries  = 8
	fenceBackoff  = 20 * time.Millisecond
	fenceBusyFor  = 30 * time.Second
	fenceBusyWait = 4 * time.Millisecond
)

// Fence is the fencing token of a sink subtask in cluster mode: the fence
// message its owner wrote on the subtask's fence subject, in the sink's own
// stream. A sink given a Fence (TxSinkConfig.Fence) commits each message
// of its output (on a stream of one replica) or each batch of it (on a
// replicated stream) on the condition that the fence message is still the
// last on the subject, and JetStream checks that condition atomically with
// storing the message or the batch: once another owner has taken the fence
// (written a later fence message), not one more message of the old owner
// is stored.
//
// The fence message must stay the last on its subject for as long as the
// owner commits: stream limits that remove it (MaxAge, or MaxMsgs and
// MaxBytes discarding old messages) fence every sink of the stream, which
// then fail until their owners take their fences again.
type Fence struct {
	// Subject is the fence subject, _platform.fence.<stream>.<key>
	// (FenceSubject).
	Subject string
	// Seq is the stream sequence of the fence message the owner wrote.
	Seq uint64
}

func (f *Fence) String() string { return fmt.Sprintf("%s@%d", f.Subject, f.Seq) }

// FenceSubject is the fence subject of key in stream: key's tokens (split
// at dots) with every character other than A-Z, a-z, 0-9, '_' and '-'
// replaced by '_', and an empty token as "_".
func FenceSubject(stream, key string) string {
	tokens := strings.Split(key, ".")
	for i, tok := range tokens {
		tokens[i] = subjectToken(tok)
	}
	return fencePrefix + subjectToken(stream) + "." + strings.Join(tokens, ".")
}

// fenceWildcard is the subject filter capturing every fence subject of
// stream.
func fenceWildcard(stream string) string { return fencePrefix + subjectToken(stream) + ".>" }

// subjectToken is s as one subject token.
func subjectToken(s string) string {
	if s == "" {
		return "_"
	}
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			return r
		}
		return '_'
	}, s)
}

// TakeFence takes the fence of the sink subtask key (job id, sink vertex
// and subtask index, "<job>.<vertex>.<subtask>") on the stream that captures
// sinkSubject, and returns the token to give the subtask's TxSink. It first
// makes the stream fit for fencing, if it is not: atomic publish allowed
// and its fence subjects captured. Then it writes a fence message on the
// condition that the last one it read is still the subject's last, reading
// again and retrying when another owner fenced in between. From then on,
// sinks holding an earlier fence of key fail with ErrFenced.
//
// The fence messages before it stay: one small message per takeover.
// Purging them would leave holes in the stream's sequence that a JetStream
// source resumed from a position before them must take for messages it
// lost (a GapError), even one reading only the sink's subject.
func TakeFence(ctx context.Context, js jetstream.JetStream, sinkSubject, key string) (*Fence, error) {
	return takeFence(ctx, js, sinkSubject, key, nil)
}

// takeFence is TakeFence, calling beforeWrite (when not nil) between
// reading the fence subject and writing on it, with the attempt from 0.
func takeFence(ctx context.Context, js jetstream.JetStream, sinkSubject, key string, beforeWrite func(attempt int)) (*Fence, error) {
	if key == "" {
		return nil, fmt.Errorf("connector: fence of sink to %q: empty key", sinkSubject)
	}
	name, err := js.StreamNameBySubject(ctx, sinkSubject)
	if err != nil {
		return nil, fmt.Errorf("connector: fence of sink to %q: no stream captures the subject: %w", sinkSubject, err)
	}
	st, err := fenceableStream(ctx, js, name)
	if err != nil {
		return nil, fmt.Errorf("connector: fence of sink to %q: %w", sinkSubject, err)
	}
	subject := FenceSubject(name, key)
	wait, conflicts := fenceBackoff, 0
	busyUntil := time.Now().Add(fenceBusyFor)
	for attempt := 0; ; attempt++ {
		last, err := lastSeq(ctx, st, subject)
		if err != nil {
			return nil, err
		}
		if beforeWrite != nil {
			beforeWrite(attempt)
		}
		ack, err := js.Publish(ctx, subject, []byte(key), jetstream.WithExpectLastSequenceForSubject(last, subject))
		if err == nil {
			return &Fence{Subject: subject, Seq: ack.Sequence}, nil
		}
		var pause time.Duration
		switch {
		case hasCode(err, jetstream.JSErrCodeStreamWrongLastSequenceConstant) && time.Now().Before(busyUntil):
			// A conditional write on the subject is in progress (on a
			// replicated stream, likely a batch of the sink that holds
			// the fence now): there are moments between its batches.
			pause = fenceBusyWait/2 + rand.N(fenceBusyWait)
		case errors.Is(err, jetstream.ErrNoStreamResponse) && time.Now().Before(busyUntil):
			// No stream listens on the fence subject yet: on a cluster,
			// the interest of a stream just made fenceable reaches the
			// other nodes a moment later. Nothing was stored.
			pause = fenceBusyWait/2 + rand.N(fenceBusyWait)
		case hasCode(err, jetstream.JSErrCodeStreamWrongLastSequence) && conflicts < fenceRetries:
			// Another owner fenced since the read.
			conflicts++
			pause, wait = wait, 2*wait
		default:
			return nil, fmt.Errorf("connector: take fence %q after sequence %d: %w", subject, last, err)
		}
		t := time.NewTimer(pause)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("connector: take fence %q: %w", subject, ctx.Err())
		}
	}
}

// fenceableStream returns stream name, first updating its configuration
// to allow atomic publish and capture its fence subjects if it does not.
func fenceableStream(ctx context.Context, js jetstream.JetStream, name string) (jetstream.Stream, error) {
	st, err := js.Stream(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("stream %q: %w", name, err)
	}
	cfg := st.CachedInfo().Config
	wildcard := fenceWildcard(name)
	captured := slices.ContainsFunc(cfg.Subjects, func(s string) bool { return subjectCovers(s, wildcard) })
	if cfg.AllowAtomicPublish && captured {
		return st, nil
	}
	cfg.AllowAtomicPublish = true
	if !captured {
		cfg.Subjects = append(cfg.Subjects, wildcard)
	}
	if _, err := js.UpdateStream(ctx, cfg); err != nil {
		return nil, fmt.Errorf("stream %q: allow atomic publish and capture %q: %w", name, wildcard, err)
	}
	if st, err = js.Stream(ctx, name); err != nil {
		return nil, fmt.Errorf("stream %q: %w", name, err)
	}
	return st, nil
}

// subjectCovers reports whether the subject filter matches every subject
// that pattern matches.
func subjectCovers(filter, pattern string) bool {
	f, p := strings.Split(filter, "."), strings.Split(pattern, ".")
	for i, tok := range f {
		if i >= len(p) {
			return false
		}
		switch {
		case tok == ">":
			return true
		case p[i] == ">":
			return false
		case tok != "*" && tok != p[i]:
			return false
		}
	}
	return len(f) == len(p)
}

// advanceFence writes a new fence message on f's subject, in stream, on the
// condition that f's message is still the subject's last, and moves f to
// it: from then on JetStream refuses every message still on its way that
// expects f's old sequence, which a read-back after the advance can rely
// on. It fails with ErrFenced when another owner took the fence since f.
// An owner renews its own fence so, it never takes another's: a zombie's
// advance fails.
//
// f is changed in place, so that whoever keeps it for the subtask's next
// start (the job's fences, one per subtask under its lease) holds the new
// sequence.
func advanceFence(ctx context.Context, js jetstream.JetStream, stream string, f *Fence) error {
	return advanceFenceAs(ctx, js, stream, f, nuid.Next())
}

// advanceFenceAs is advanceFence writing mark as the new fence message:
// when the condition fails, a message with this mark as the subject's last
// is this advance's own, stored by a try whose acknowledgement was lost.
func advanceFenceAs(ctx context.Context, js jetstream.JetStream, stream string, f *Fence, mark string) error {
	busyUntil := time.Now().Add(fenceBusyFor)
	for {
		ack, err := js.Publish(ctx, f.Subject, []byte(mark), jetstream.WithExpectLastSequenceForSubject(f.Seq, f.Subject))
		if err == nil {
			f.Seq = ack.Sequence
			return nil
		}
		switch {
		case hasCode(err, jetstream.JSErrCodeStreamWrongLastSequence):
			st, serr := js.Stream(ctx, stream)
			if serr != nil {
				return fmt.Errorf("connector: advance fence %s: stream %q: %w", f, stream, serr)
			}
			last, lerr := st.GetLastMsgForSubject(ctx, f.Subject)
			if lerr == nil && string(last.Data) == mark {
				f.Seq = last.Sequence
				return nil
			}
			return fmt.Errorf("connector: advance fence %s: %w: %w", f, ErrFenced, err)
		case ctx.Err() != nil:
			return fmt.Errorf("connector: advance fence %s: %w", f, ctx.Err())
		case !passingFenceError(err) || time.Now().After(busyUntil):
			return fmt.Errorf("connector: advance fence %s: %w", f, err)
		}
		t := time.NewTimer(fenceBusyWait/2 + rand.N(fenceBusyWait))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("connector: advance fence %s: %w", f, ctx.Err())
		}
	}
}

// passingFenceError: a write on a fence subject failed for a reason that
// passes, so it is tried again: another conditional write on the subject in
// progress (on a replicated stream), no stream answering on it yet, or no
// acknowledgement (it may have been stored: advanceFenceAs's mark tells).
func passingFenceError(err error) bool {
	return hasCode(err, jetstream.JSErrCodeStreamWrongLastSequenceConstant) ||
		errors.Is(err, jetstream.ErrNoStreamResponse) ||
		errors.Is(err, nats.ErrTimeout) || errors.Is(err, context.DeadlineExceeded)
}
