package broadcast

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/state"
)

// BlobKind is the kind of a broadcast process operator's snapshot blobs.
const BlobKind = "broadcast"

// A blob is the subtask's broadcast states, then the keyed state and
// timers as a keyed process operator writes them:
//
//	"BCST" | u8 version | u32 states | state* | keyed snapshot
//	state: u32 name length | name | u32 entries | u32 length | entries
//
// entries are in the map_entries layout, (u32 key length | key | u32
// value length | value)*, in key order.
var magic = [4]byte{'B', 'C', 'S', 'T'}

const (
	version = 1
	// maxNameLen and maxStates bound what a damaged blob can make the
	// decoder allocate before it fails.
	maxNameLen = 1 << 10
	maxStates  = 1 << 12
)

// ErrDamaged is the error of a blob that cannot be decoded.
var ErrDamaged = errors.New("damaged broadcast state snapshot")

// captured is one broadcast state as a snapshot holds it.
type captured struct {
	name    string
	entries int
	enc     []byte
}

func (op *Operator) StateKind() string { return BlobKind }

// Snapshot captures the broadcast states (their cached encodings, which no
// later write changes) and the keyed side's state and timers.
func (op *Operator) Snapshot(ctx context.Context) (operator.Blob, error) {
	states := op.store.capture()
	keyed, err := op.keyed.Snapshot(ctx)
	if err != nil {
		return operator.Blob{}, err
	}
	return operator.Blob{
		Write: func(ctx context.Context, w io.Writer) error {
			if _, err := w.Write(appendSection(nil, states)); err != nil {
				return err
			}
			return keyed.Write(ctx, w)
		},
		Release: keyed.Release,
	}, nil
}

// capture lists the broadcast states with their encoded entries.
func (s *Store) capture() []captured {
	var out []captured
	for i, m := range s.maps {
		if m == nil {
			continue
		}
		n, enc := s.Entries(uint32(i))
		out = append(out, captured{name: s.names[i], entries: n, enc: enc})
	}
	return out
}

// appendSection encodes the broadcast states of a blob.
func appendSection(dst []byte, states []captured) []byte {
	dst = append(dst, magic[:]...)
	dst = append(dst, version)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(states)))
	for _, st := range states {
		dst = binary.LittleEndian.AppendUint32(dst, uint32(len(st.name)))
		dst = append(dst, st.name...)
		dst = binary.LittleEndian.AppendUint32(dst, uint32(st.entries))
		dst = binary.LittleEndian.AppendUint32(dst, uint32(len(st.enc)))
		dst = append(dst, st.enc...)
	}
	return dst
}

// readSection decodes the broadcast states at the start of a blob, reading
// no further than they go, so that r is left at the keyed snapshot. No
// state's entries may exceed limit bytes (0: no limit).
func readSection(r io.Reader, limit int64) ([]captured, error) {
	var head [9]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return nil, fmt.Errorf("%w: header: %w", ErrDamaged, err)
	}
	if [4]byte(head[:4]) != magic {
		return nil, fmt.Errorf("%w: not a broadcast operator's snapshot", ErrDamaged)
	}
	if head[4] != version {
		return nil, fmt.Errorf("%w: version %d, want %d", ErrDamaged, head[4], version)
	}
	n := binary.LittleEndian.Uint32(head[5:])
	if n > maxStates {
		return nil, fmt.Errorf("%w: %d states", ErrDamaged, n)
	}
	var out []captured
	for i := range n {
		nameLen, err := readU32(r)
		if err != nil || nameLen > maxNameLen {
			return nil, fmt.Errorf("%w: state %d: name length %d: %v", ErrDamaged, i, nameLen, err)
		}
		name := make([]byte, nameLen)
		if _, err := io.ReadFull(r, name); err != nil {
			return nil, fmt.Errorf("%w: state %d: name: %w", ErrDamaged, i, err)
		}
		entries, err := readU32(r)
		if err != nil {
			return nil, fmt.Errorf("%w: state %q: %w", ErrDamaged, name, err)
		}
		size, err := readU32(r)
		if err != nil || limit > 0 && int64(size) > limit {
			return nil, fmt.Errorf("%w: state %q: %d bytes of entries (budget %d): %v", ErrDamaged, name, size, limit, err)
		}
		enc := make([]byte, size)
		if _, err := io.ReadFull(r, enc); err != nil {
			return nil, fmt.Errorf("%w: state %q: entries: %w", ErrDamaged, name, err)
		}
		if err := eachEntry(enc, int(entries), func(_, _ []byte) error { return nil }); err != nil {
			return nil, fmt.Errorf("%w: state %q: %w", ErrDamaged, name, err)
		}
		out = append(out, captured{name: string(name), entries: int(entries), enc: enc})
	}
	return out, nil
}

func readU32(r io.Reader) (uint32, error) {
	var b [4]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b[:]), nil
}

// eachEntry passes the want entries of enc to f, in order, and fails when
// enc holds another number of entries or ends inside one.
func eachEntry(enc []byte, want int, f func(k, v []byte) error) error {
	n := 0
	for len(enc) > 0 {
		var k, v []byte
		var ok bool
		if k, enc, ok = cut(enc); !ok {
			return fmt.Errorf("entry %d: key: truncated", n)
		}
		if v, enc, ok = cut(enc); !ok {
			return fmt.Errorf("entry %d: value: truncated", n)
		}
		if err := f(k, v); err != nil {
			return err
		}
		n++
	}
	if n != want {
		return fmt.Errorf("%d entries, the header says %d", n, want)
	}
	return nil
}

// cut takes a u32 length and that many bytes off b.
func cut(b []byte) (head, rest []byte, ok bool) {
	if len(b) < 4 {
		return nil, nil, false
	}
	n := binary.LittleEndian.Uint32(b)
	if uint64(n) > uint64(len(b)-4) {
		return nil, nil, false
	}
	return b[4 : 4+n : 4+n], b[4+n:], true
}

// Restore loads, before the first batch, the broadcast states of the
// former subtask 0 (every former subtask held the same) and the keyed state
// and timers of the subtask's key groups from every former subtask.
func (op *Operator) Restore(ctx context.Context, srcs []io.Reader, maxParallelism int, keyGroups state.Range) error {
	for i, r := range srcs {
		states, err := readSection(r, op.store.limit)
		if err != nil {
			return fmt.Errorf("operator[%s]: former subtask %d: %w", op.vertex, i, err)
		}
		if i > 0 {
			continue
		}
		if err := op.store.load(states); err != nil {
			return fmt.Errorf("operator[%s]: %w", op.vertex, err)
		}
	}
	return op.keyed.Restore(ctx, srcs, maxParallelism, keyGroups)
}

// load fills the empty store with restored states, matched by name: a
// state the module no longer declares as a broadcast state is an error, as
// Flink refuses state it cannot restore.
func (s *Store) load(states []captured) error {
	for _, st := range states {
		i := -1
		for j, name := range s.names {
			if name == st.name && s.maps[j] != nil {
				i = j
			}
		}
		if i < 0 {
			return fmt.Errorf("the snapshot has broadcast state %q, which the module does not declare", st.name)
		}
		err := eachEntry(st.enc, st.entries, func(k, v []byte) error { return s.Put(uint32(i), k, v) })
		if err != nil {
			return err
		}
	}
	return nil
}
