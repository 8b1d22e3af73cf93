package connector

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
)

// A Replay is encoded as u32 n | n times (u64 digest lane 0 | u64 lane 1 |
// u32 count), the digests in ascending order, each once with a count of at
// least 1.
const replayEntrySize = 20

// encode writes the records the replay still expects.
func (r *Replay) encode() []byte {
	digests := make([]recordDigest, 0, len(r.count))
	for d := range r.count {
		digests = append(digests, d)
	}
	slices.SortFunc(digests, func(a, b recordDigest) int {
		switch {
		case a.less(b):
			return -1
		case b.less(a):
			return 1
		}
		return 0
	})
	out := make([]byte, 0, 4+len(digests)*replayEntrySize)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(digests)))
	for _, d := range digests {
		out = binary.LittleEndian.AppendUint64(out, d[0])
		out = binary.LittleEndian.AppendUint64(out, d[1])
		out = binary.LittleEndian.AppendUint32(out, r.count[d])
	}
	return out
}

// decodeReplay reads what encode wrote; nil for a replay that expects
// nothing.
func decodeReplay(data []byte) (*Replay, error) {
	if len(data) < 4 {
		return nil, errors.New("replay: truncated")
	}
	n := binary.LittleEndian.Uint32(data)
	if uint64(len(data)-4) != uint64(n)*replayEntrySize {
		return nil, fmt.Errorf("replay: %d bytes for %d digests, want %d", len(data)-4, n, uint64(n)*replayEntrySize)
	}
	if n == 0 {
		return nil, nil
	}
	r := newReplay(0)
	var prev recordDigest
	for i := range int(n) {
		at := data[4+i*replayEntrySize:]
		d := recordDigest{binary.LittleEndian.Uint64(at), binary.LittleEndian.Uint64(at[8:])}
		c := binary.LittleEndian.Uint32(at[16:])
		if c == 0 {
			return nil, fmt.Errorf("replay: digest %d has a count of 0", i)
		}
		if i > 0 && !prev.less(d) {
			return nil, fmt.Errorf("replay: digest %d is not above the one before", i)
		}
		r.count[d] = c
		r.left += int64(c)
		prev = d
	}
	r.max = r.left
	return r, nil
}

// KeepSkipping makes a sink restored from a checkpoint taken while an
// earlier fallback's replay was under way (SkipCommitted) go on dropping
// the committed records that replay had not produced again yet: those of
// the restored sink states it takes over (DecodeSinkState; nil ones are
// skipped). It must be called before the first Write, and before
// SkipCommitted when both apply. More records than the sink's staging
// budget can remember (Budget / 48 bytes) fail with ErrReplayBudget.
func (s *TxSink) KeepSkipping(states []*Replay) (int64, error) {
	r := s.replay
	if r == nil {
		r = newReplay(s.budget / replayEntryBytes)
	}
	n, err := r.merge(states)
	if err != nil {
		return 0, fmt.Errorf("connector: sink to %q: %w (budget %d bytes)", s.subject, err, s.budget)
	}
	if r.left > 0 {
		s.replay = r
	}
	return n, nil
}

// merge adds what states expect to r, the nil ones skipped, and returns
// the number of records added.
func (r *Replay) merge(states []*Replay) (int64, error) {
	var n int64
	for _, st := range states {
		if st == nil {
			continue
		}
		if r.left+st.left > r.max {
			return 0, fmt.Errorf("%w: more than %d records still to drop from the replay", ErrReplayBudget, r.max)
		}
		for d, c := range st.count {
			r.count[d] += c
		}
		r.left += st.left
		n += st.left
	}
	return n, nil
}
