package connector

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"
)

// wholeStream names the single filter of a source without subjects.
const wholeStream = ">"

// BoundedEnd fixes the end of a bounded source: for each filter of subjects
// (">" when empty), the last stream sequence matching it now, or 0 when none
// does. A job computes it once when it starts and keeps it, passing it to
// every subtask as JetStreamSourceConfig.End.
func BoundedEnd(ctx context.Context, js jetstream.JetStream, stream string, subjects []string) (map[string]uint64, error) {
	names, err := filtersOf(stream, subjects)
	if err != nil {
		return nil, err
	}
	st, err := js.Stream(ctx, stream)
	if err != nil {
		return nil, fmt.Errorf("connector: source on stream %q: %w", stream, err)
	}
	ends := make(map[string]uint64, len(names))
	for _, name := range names {
		if ends[name], err = lastSeq(ctx, st, name); err != nil {
			return nil, err
		}
	}
	return ends, nil
}

// lastSeq is the stream sequence of the last message matching filter, or 0.
func lastSeq(ctx context.Context, st jetstream.Stream, filter string) (uint64, error) {
	msg, err := st.GetLastMsgForSubject(ctx, filter)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("connector: last message of stream %q filter %q: %w", st.CachedInfo().Config.Name, filter, err)
	}
	return msg.Sequence, nil
}

// filtersOf names the filters of a source: its subjects, or the whole stream.
func filtersOf(stream string, subjects []string) ([]string, error) {
	if len(subjects) == 0 {
		return []string{wholeStream}, nil
	}
	for i, subj := range subjects {
		if subj == "" {
			return nil, fmt.Errorf("connector: source on stream %q: subject filter %d is empty", stream, i)
		}
		for _, prev := range subjects[:i] {
			if server.SubjectsCollide(prev, subj) {
				return nil, fmt.Errorf("connector: source on stream %q: subject filters %q and %q overlap", stream, prev, subj)
			}
		}
	}
	return subjects, nil
}

// SubtaskFilters are the filters subtask reads of a source whose filters
// (its subject filters, or the one of the whole stream) are shared among
// parallelism subtasks, in the order the subtask numbers its splits: every
// parallelism-th filter from the subtask's index.
func SubtaskFilters[T any](filters []T, subtask, parallelism int) []T {
	var out []T
	for i := subtask; i < len(filters); i += parallelism {
		out = append(out, filters[i])
	}
	return out
}
