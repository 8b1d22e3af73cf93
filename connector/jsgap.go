package connector

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// What a JetStream source does at a sequence gap (JetStreamSourceConfig.OnGap).
const (
	// GapFail fails the source with a *GapError: the default.
	GapFail = "fail"
	// GapSkip counts the gap (JetStreamSourceConfig.Gap) and goes on.
	GapSkip = "skip"
)

// ErrGap: messages a source had not read yet were removed from its stream.
var ErrGap = errors.New("sequence gap")

// GapError is a gap in what a subject filter of a JetStream source read:
// messages it had not read yet were removed from the stream (by its limits,
// a purge or a delete) or the stream was recreated, so that what comes
// after its position is not what followed it.
type GapError struct {
	// Source names the source (its vertex), Stream and Filter what it
	// reads.
	Source, Stream, Filter string
	// After is the stream sequence the filter had read up to (its
	// checkpointed position after a restore); Found the sequence of the
	// message that came next.
	After, Found uint64
	// Why says how the gap was found.
	Why string
}

func (e *GapError) Error() string {
	expected := fmt.Sprintf("stream sequence %d", e.After+1)
	if e.Filter != wholeStream {
		expected = "the filter's next message with none removed before it"
	}
	return fmt.Sprintf("connector: source %s: stream %q filter %q: %v after position %d: expected %s, found stream sequence %d (%s); "+
		"set the source's on_gap: skip to go on past gaps", e.Source, e.Stream, e.Filter, ErrGap, e.After, expected, e.Found, e.Why)
}

// Unwrap returns ErrGap.
func (e *GapError) Unwrap() error { return ErrGap }

// gapWatch is what a resumed filter knows to find gaps: what the stream
// had removed after its position when it opened.
type gapWatch struct {
	// resumed is set until the first message after a restore; removed
	// then says why messages right after the position are gone ("" for
	// none).
	resumed bool
	removed string
	// removedBelow is, with removed set, the first sequence after the
	// position that was removed: a first message past it follows a gap.
	removedBelow uint64
}

// watchResume looks, for a filter that resumes after stream sequence pos,
// at what the stream removed after pos: messages below its first sequence,
// or deleted ones. For a filter of the whole stream every sequence is the
// filter's, so the first message says it all; for subject filters the
// stream does not say which subjects removed messages had, so any removal
// right after the position counts.
func watchResume(ctx context.Context, st jetstream.Stream, f *filterReader) error {
	f.gap = gapWatch{resumed: true}
	if f.name == wholeStream {
		return nil
	}
	info, err := st.Info(ctx, jetstream.WithDeletedDetails(true))
	if err != nil {
		return err
	}
	switch {
	case info.State.FirstSeq > f.pos+1:
		f.gap.removed = fmt.Sprintf("the stream now starts at sequence %d: messages after %d were removed before the source read them", info.State.FirstSeq, f.pos)
		f.gap.removedBelow = f.pos + 1
	default:
		for _, d := range info.State.Deleted {
			if d > f.pos && (f.gap.removedBelow == 0 || d < f.gap.removedBelow) {
				f.gap.removedBelow = d
			}
		}
		if f.gap.removedBelow > 0 {
			f.gap.removed = fmt.Sprintf("message %d after the position was deleted from the stream before the source read it", f.gap.removedBelow)
		}
	}
	return nil
}

// checkGap looks at the next message of filter f, at stream sequence seq,
// for a gap since the last one; it returns a *GapError for one, nil
// otherwise. A subject filter's sequences skip the other subjects'
// messages, so for it this finds only what a resume knows (watchResume);
// checkPending finds removals while it reads.
func (s *JetStreamSource) checkGap(f *filterReader, seq uint64) *GapError {
	w := &f.gap
	gap := func(why string) *GapError {
		return &GapError{Source: s.name, Stream: s.stream, Filter: f.name, After: f.pos, Found: seq, Why: why}
	}
	defer func() { w.resumed = false }()
	switch {
	case f.pos == 0 || seq <= f.pos+1:
		// From the start, the first message may be any; sequence +1 is
		// never a gap.
		return nil
	case f.name == wholeStream:
		return gap(fmt.Sprintf("%d sequences of the stream were removed before the source read them", seq-f.pos-1))
	case w.resumed && w.removed != "" && seq > w.removedBelow:
		return gap(w.removed)
	}
	return nil
}

// checkPending looks, for a subject filter, at the pending count the next
// message (at stream sequence seq) carries: the filter's messages after it
// in the stream when the server sent it. The server counts a message of
// the filter removed before it sent it off that count at once
// (decrementing it as it removes the message), and a message added onto
// it, so from one message to the next the count falls by one, the message
// sent, plus the removals, less the additions: a fall by more is a removal
// of messages the filter had not read. Removals of other subjects'
// messages, and of messages the filter has read, do not change it; new
// messages arriving as fast as messages are removed hide the removal
// until a resume (watchResume). Whole-stream filters have checkGap.
func (s *JetStreamSource) checkPending(f *filterReader, seq, pending uint64) *GapError {
	before := f.pending.Load()
	if f.name == wholeStream || pending+1 >= before {
		return nil
	}
	return &GapError{Source: s.name, Stream: s.stream, Filter: f.name, After: f.pos, Found: seq,
		Why: fmt.Sprintf("the stream removed %d of the filter's messages the source had not read yet: it held %d after position %d and %d after %d",
			before-pending-1, before, f.pos, pending, seq)}
}
