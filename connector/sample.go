package connector

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// SubjectMessage is a message read back from a sink's subject.
type SubjectMessage struct {
	Sequence  uint64
	Key       []byte // the Platform-Key header
	Value     []byte
	Timestamp int64 // the Platform-Timestamp header, else the stored time
}

// LastMessages reads the last n messages of subject (no wildcards) from the
// stream that captures it, oldest first. It finds where they start by
// asking the server how many messages of the subject follow a sequence, so
// it reads only those n, however long the stream.
func LastMessages(ctx context.Context, js jetstream.JetStream, subject string, n int) ([]SubjectMessage, error) {
	if n <= 0 {
		return nil, nil
	}
	name, err := js.StreamNameBySubject(ctx, subject)
	if err != nil {
		return nil, fmt.Errorf("connector: no stream captures %q: %w", subject, err)
	}
	st, err := js.Stream(ctx, name)
	if err != nil {
		return nil, err
	}
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(subject))
	if err != nil {
		return nil, err
	}
	total := info.State.Subjects[subject]
	if total == 0 {
		return nil, nil
	}
	// The least sequence after which at most n messages of the subject
	// remain: pending(seq) counts those at or after seq and only falls
	// as seq grows.
	lo, hi := info.State.FirstSeq, info.State.LastSeq
	if total > uint64(n) {
		for lo < hi {
			mid := lo + (hi-lo)/2
			p, err := pendingFrom(ctx, st, subject, mid)
			if err != nil {
				return nil, err
			}
			if p > uint64(n) {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
	}
	want := min(total, uint64(n))
	cons, err := st.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{subject}, DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: lo,
	})
	if err != nil {
		return nil, err
	}
	out := make([]SubjectMessage, 0, want)
	for uint64(len(out)) < want {
		batch, err := cons.Fetch(int(want)-len(out), jetstream.FetchMaxWait(2*time.Second))
		if err != nil {
			return nil, err
		}
		got := 0
		for msg := range batch.Messages() {
			got++
			out = append(out, subjectMessage(msg))
		}
		if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) {
			return nil, err
		}
		if got == 0 {
			break // removed meanwhile
		}
	}
	return out, nil
}

// pendingFrom is how many messages of subject the stream holds at or after
// seq, from a consumer made for the question and deleted after it.
func pendingFrom(ctx context.Context, st jetstream.Stream, subject string, seq uint64) (uint64, error) {
	cons, err := st.CreateConsumer(ctx, jetstream.ConsumerConfig{
		FilterSubject: subject, DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: seq,
		AckPolicy: jetstream.AckNonePolicy, InactiveThreshold: time.Minute, MemoryStorage: true,
	})
	if err != nil {
		return 0, err
	}
	info := cons.CachedInfo()
	_ = st.DeleteConsumer(context.WithoutCancel(ctx), info.Name)
	return info.NumPending, nil
}

func subjectMessage(msg jetstream.Msg) SubjectMessage {
	m := SubjectMessage{Value: msg.Data()}
	if meta, err := msg.Metadata(); err == nil {
		m.Sequence = meta.Sequence.Stream
		m.Timestamp = meta.Timestamp.UnixMilli()
	}
	h := msg.Headers()
	if k := h.Get(HeaderKey); k != "" {
		m.Key = []byte(k)
	}
	if ts, err := strconv.ParseInt(h.Get(HeaderTimestamp), 10, 64); err == nil {
		m.Timestamp = ts
	}
	return m
}
