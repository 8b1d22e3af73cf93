package connector

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// StreamLimits is what a stream keeps and drops: its retention and limits,
// as JetStream reports them (zero or negative limits are none).
type StreamLimits struct {
	Stream    string
	Retention jetstream.RetentionPolicy
	Discard   jetstream.DiscardPolicy
	MaxMsgs   int64
	MaxBytes  int64
	MaxAge    time.Duration
	// MaxMsgsPerSubject bounds the messages kept of each subject.
	MaxMsgsPerSubject int64
}

// Replayable says whether a source can read the stream again from any
// position it checkpointed: only limits retention keeps messages after
// they are read (interest and work-queue retention remove them once
// consumers acknowledge them, or when none is interested).
func (l StreamLimits) Replayable() bool { return l.Retention == jetstream.LimitsPolicy }

// Limited says whether the stream removes messages for a limit of count,
// size or age.
func (l StreamLimits) Limited() bool {
	return l.MaxMsgs > 0 || l.MaxBytes > 0 || l.MaxAge > 0 || l.MaxMsgsPerSubject > 0
}

// StreamLimitsOf is the retention and limits of stream.
func StreamLimitsOf(ctx context.Context, js jetstream.JetStream, stream string) (StreamLimits, error) {
	st, err := js.Stream(ctx, stream)
	if err != nil {
		return StreamLimits{}, fmt.Errorf("connector: stream %q: %w", stream, err)
	}
	c := st.CachedInfo().Config
	return StreamLimits{
		Stream: c.Name, Retention: c.Retention, Discard: c.Discard, MaxMsgs: c.MaxMsgs, MaxBytes: c.MaxBytes,
		MaxAge: c.MaxAge, MaxMsgsPerSubject: c.MaxMsgsPerSubject,
	}, nil
}

// SubjectStreamLimits is the retention and limits of the stream that
// captures subject.
func SubjectStreamLimits(ctx context.Context, js jetstream.JetStream, subject string) (StreamLimits, error) {
	stream, err := js.StreamNameBySubject(ctx, subject)
	if err != nil {
		return StreamLimits{}, fmt.Errorf("connector: no stream captures %q: %w", subject, err)
	}
	return StreamLimitsOf(ctx, js, stream)
}
