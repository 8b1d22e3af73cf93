package runtime

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"wasmstream.io/platform/connector"
	"wasmstream.io/platform/runtime/exec"
	"wasmstream.io/platform/runtime/spec"
)

// ErrBadSample: the sample names a sink the job lacks, or one that keeps
// nothing to show.
var ErrBadSample = errors.New("no sample")

// MaxSample bounds the records of one sample.
const MaxSample = 1000

// Sample is the last records a sink of a job wrote.
type Sample struct {
	Job  string `json:"job"`
	Sink string `json:"sink"`
	// Kind is print (the records the sink's subtasks keep in memory) or
	// jetstream (the last messages of its subject, read from the stream).
	Kind    string `json:"kind"`
	Subject string `json:"subject,omitempty"`
	// Records are ordered by timestamp, then key, then when they were
	// written.
	Records []SampleRecord `json:"records"`
}

// SampleRecord is one record of a sample. Key and value are the record's
// bytes as text.
type SampleRecord struct {
	Key       string `json:"key"`
	Value     string `json:"value"`
	Timestamp int64  `json:"timestamp"`
	// Subtask is the print sink's subtask that wrote it.
	Subtask *int `json:"subtask,omitempty"`
	// Sequence is the message's stream sequence, for a JetStream sink.
	Sequence uint64 `json:"sequence,omitempty"`
}

// Sample returns the last n (1 to MaxSample) records sink wrote; sink may
// be empty when the job has one print sink, or one sink.
func (m *Manager) Sample(ctx context.Context, id, sink string, n int) (Sample, error) {
	j, ok := m.job(id)
	if !ok {
		return Sample{}, fmt.Errorf("job %s: %w", id, ErrNotFound)
	}
	if n < 1 || n > MaxSample {
		return Sample{}, fmt.Errorf("%w: n must be between 1 and %d, got %d", ErrBadSample, MaxSample, n)
	}
	s, err := sampledSink(j.x.Plan.Job, sink)
	if err != nil {
		return Sample{}, fmt.Errorf("job %s: %w", id, err)
	}
	out := Sample{Job: id, Sink: s.ID, Records: []SampleRecord{}}
	switch {
	case s.Print != nil:
		out.Kind = "print"
		out.Records = printed(j.x.Counters[s.ID], n)
	case s.JetStream != nil:
		out.Kind, out.Subject = "jetstream", s.JetStream.Subject
		if m.cfg.JetStream == nil {
			return Sample{}, fmt.Errorf("job %s sink %s: %w: no NATS connection", id, s.ID, ErrBadSample)
		}
		msgs, err := connector.LastMessages(ctx, m.cfg.JetStream, s.JetStream.Subject, n)
		if err != nil {
			return Sample{}, fmt.Errorf("job %s sink %s: %w", id, s.ID, err)
		}
		for _, msg := range msgs {
			out.Records = append(out.Records, SampleRecord{Key: string(msg.Key), Value: string(msg.Value), Timestamp: msg.Timestamp, Sequence: msg.Sequence})
		}
	case s.Discard:
		return Sample{}, fmt.Errorf("job %s sink %s: %w: it discards its records", id, s.ID, ErrBadSample)
	default:
		return Sample{}, fmt.Errorf("job %s sink %s: %w: only print and jetstream sinks have samples; read what it wrote with a NATS client", id, s.ID, ErrBadSample)
	}
	return out, nil
}

// sampledSink is the sink a sample names, or the one it means when it names
// none.
func sampledSink(job *spec.Job, id string) (*spec.Sink, error) {
	var ids, prints []string
	for i := range job.Sinks {
		s := &job.Sinks[i]
		if s.ID == id {
			return s, nil
		}
		ids = append(ids, s.ID)
		if s.Print != nil {
			prints = append(prints, s.ID)
		}
	}
	if id == "" {
		switch {
		case len(prints) == 1:
			return sampledSink(job, prints[0])
		case len(ids) == 1:
			return &job.Sinks[0], nil
		}
		return nil, fmt.Errorf("%w: name one of its sinks (%s)", ErrBadSample, strings.Join(ids, ", "))
	}
	return nil, fmt.Errorf("%w: no sink %q; its sinks are %s", ErrBadSample, id, strings.Join(ids, ", "))
}

// printed is the last n records of a print sink's subtasks together, by
// when they were written, then ordered by timestamp and key.
func printed(subtasks []*exec.Counters, n int) []SampleRecord {
	var all []exec.Printed
	for _, c := range subtasks {
		if r := c.Printed.Load(); r != nil {
			all = append(all, r.Last(n)...)
		}
	}
	slices.SortStableFunc(all, func(a, b exec.Printed) int { return a.Written.Compare(b.Written) })
	if len(all) > n {
		all = all[len(all)-n:]
	}
	slices.SortStableFunc(all, func(a, b exec.Printed) int {
		return cmp.Or(cmp.Compare(a.Timestamp, b.Timestamp), strings.Compare(a.Key, b.Key), a.Written.Compare(b.Written))
	})
	out := make([]SampleRecord, len(all))
	for i, p := range all {
		out[i] = SampleRecord{Key: p.Key, Value: p.Value, Timestamp: p.Timestamp, Subtask: &p.Subtask}
	}
	return out
}
