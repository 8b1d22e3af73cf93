package replay

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/connector"
)

// streamEnd is where the replay stops reading the source's stream, by
// subject filter: the stream's last sequence when the replay began, or
// until when it is lower. The stream must still hold what came after the
// checkpoint's positions.
func streamEnd(ctx context.Context, js jetstream.JetStream, source, stream string, subjects []string, pos map[string]uint64, until uint64) (map[string]uint64, error) {
	if js == nil {
		return nil, fmt.Errorf("%w: source %s: the platform has no JetStream", ErrSourceGone, source)
	}
	st, err := js.Stream(ctx, stream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, fmt.Errorf("%w: source %s: stream %q does not exist", ErrSourceGone, source, stream)
	}
	if err != nil {
		return nil, fmt.Errorf("source %s: stream %q: %w", source, stream, err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("source %s: stream %q: %w", source, stream, err)
	}
	filters := make([]string, 0, len(pos))
	for f := range pos {
		filters = append(filters, f)
	}
	sort.Strings(filters)
	for _, f := range filters {
		seq := pos[f]
		if seq > info.State.LastSeq {
			return nil, fmt.Errorf("%w: source %s filter %q was at stream sequence %d at the checkpoint, but stream %q ends at %d (was it deleted, recreated or purged?)",
				ErrSourceGone, source, f, seq, stream, info.State.LastSeq)
		}
		if info.State.Msgs > 0 && seq+1 < info.State.FirstSeq {
			return nil, fmt.Errorf("%w: source %s filter %q: stream %q starts at sequence %d, the records after %d are gone",
				ErrSourceGone, source, f, stream, info.State.FirstSeq, seq)
		}
	}
	end, err := connector.BoundedEnd(ctx, js, stream, subjects)
	if err != nil {
		return nil, fmt.Errorf("source %s: %w", source, err)
	}
	if until > 0 {
		for f, seq := range end {
			end[f] = min(seq, until)
		}
	}
	return end, nil
}
