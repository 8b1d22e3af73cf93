package connector

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/abi"
)

// ErrReplayBudget is a fallback whose committed output is more than the
// sink can remember to drop from the replay (SkipCommitted).
var ErrReplayBudget = errors.New("committed output beyond the restored checkpoint exceeds the sink's budget")

// replayEntryBytes is what one remembered record costs in memory: its
// digest and count in a Go map.
const replayEntryBytes = 48

// SkipCommitted prepares a sink restored from an older checkpoint than the
// newest (the newer ones corrupt): the output of its epochs after
// checkpoint after, which it committed before the failure, comes again when
// the job replays its input from the older checkpoint, under new ids. It
// reads back the sink's own messages of those epochs stored since since
// (when the older checkpoint was triggered), and from then on Write drops
// each record equal to one of them (key, value, timestamp and headers), as
// many times as it was stored, so that the replay adds only what was not
// committed. It returns the number of committed records found. It must be
// called before the first Write; a fenced sink first advances its fence
// (as Recover does), so that nothing still on its way lands after the
// read. More committed records than the sink's staging budget can remember
// (Budget / 48 bytes, with those KeepSkipping took over) fail with
// ErrReplayBudget, naming the counts.
//
// What it relies on, as the exactly-once sinks do: replaying the same
// input from a checkpoint produces the same records, in any order.
func (s *TxSink) SkipCommitted(ctx context.Context, after int64, since time.Time) (int64, error) {
	if s.fence != nil {
		if err := s.advanceFence(ctx); err != nil {
			return 0, err
		}
	}
	r := s.replay
	if r == nil {
		r = newReplay(s.budget / replayEntryBytes)
	}
	before := r.left
	prefix := s.prefix + "."
	err := s.scan(ctx, since.Add(-clockMargin), false, func(msg jetstream.Msg) error {
		id := storedID(msg.Headers())
		rest, ok := strings.CutPrefix(id, prefix)
		if !ok {
			return nil
		}
		epoch, _, ok := strings.Cut(rest, ".")
		if n, err := strconv.ParseInt(epoch, 10, 64); !ok || err != nil || n <= after {
			return nil
		}
		if !r.remember(msg) {
			return fmt.Errorf("connector: sink to %q: %w: more than %d records of epochs after checkpoint %d (budget %d bytes)",
				s.subject, ErrReplayBudget, r.max, after, s.budget)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	found := r.left - before
	if r.left > 0 {
		s.replay = r
	}
	return found, nil
}

// Replayed is the number of records Write dropped as committed before a
// fallback (SkipCommitted), and Unreplayed those it still expects.
func (s *TxSink) Replayed() int64 { return s.dropped }

// Unreplayed: see Replayed.
func (s *TxSink) Unreplayed() int64 {
	if s.replay == nil {
		return 0
	}
	return s.replay.left
}

// dropReplayed returns recs without the records the replay expects, in a
// buffer of the sink's, and forgets the replay once it has seen them all.
func (s *TxSink) dropReplayed(recs []abi.Record) []abi.Record {
	clear(s.kept) // what the last call kept, not to be held on to
	kept := s.kept[:0]
	for i := range recs {
		if s.replay.take(&recs[i]) {
			s.dropped++
			continue
		}
		kept = append(kept, recs[i])
	}
	s.kept = kept
	if s.replay.left == 0 {
		s.replay = nil
	}
	return kept
}

// Replay is the multiset of committed records a replay will produce again,
// by digest: what a sink restored past corrupt checkpoints still drops
// (SkipCommitted), kept in the sink's checkpoints (Snapshot) so that a
// later restore drops the rest (KeepSkipping). Digests are SHA-256 based,
// the same in every process, since a checkpoint outlives the process that
// took it.
type Replay struct {
	count map[recordDigest]uint32
	// left counts the records remembered and not yet seen again; max is
	// the most it may hold.
	left, max int64
	// buf is the bytes being hashed, reused record after record.
	buf []byte
}

// recordDigest is 128 bits of hash of a record's key, value, timestamp and
// headers (in any order).
type recordDigest [2]uint64

func newReplay(max int64) *Replay {
	return &Replay{count: map[recordDigest]uint32{}, max: max}
}

// Len is the number of records the replay still expects.
func (r *Replay) Len() int64 { return r.left }

// remember adds a stored message's record; false when the budget is full.
func (r *Replay) remember(msg jetstream.Msg) bool {
	if r.left == r.max {
		return false
	}
	h := msg.Headers()
	ts, _ := strconv.ParseInt(h.Get(HeaderTimestamp), 10, 64)
	d := r.base([]byte(h.Get(HeaderKey)), msg.Data(), ts)
	for name, vals := range h {
		if sinkHeader(name) {
			continue
		}
		for _, v := range vals {
			d = d.add(r.header([]byte(name), []byte(v)))
		}
	}
	r.count[d]++
	r.left++
	return true
}

// take reports whether rec is one the replay expects, counting it off.
func (r *Replay) take(rec *abi.Record) bool {
	d := r.base(rec.Key, rec.Value, rec.Timestamp)
	for _, hd := range rec.Headers {
		d = d.add(r.header(hd.Name, hd.Value))
	}
	return r.takeDigest(d)
}

// rememberLine adds a line an object holds (an object store sink's
// records); false when the budget is full.
func (r *Replay) rememberLine(line []byte) bool {
	if r.left == r.max {
		return false
	}
	r.count[r.line(line)]++
	r.left++
	return true
}

// takeLine reports whether a record's line is one the replay expects,
// counting it off.
func (r *Replay) takeLine(line []byte) bool { return r.takeDigest(r.line(line)) }

func (r *Replay) takeDigest(d recordDigest) bool {
	n := r.count[d]
	if n == 0 {
		return false
	}
	if n == 1 {
		delete(r.count, d)
	} else {
		r.count[d] = n - 1
	}
	r.left--
	return true
}

// base digests a record without its headers, header one header; a
// record's digest is the sum of its base and its headers', so that the
// order of the headers does not matter. A first byte tells the two apart.
func (r *Replay) base(key, value []byte, ts int64) recordDigest {
	r.buf = append(r.buf[:0], 'r')
	r.buf = binary.LittleEndian.AppendUint64(r.buf, uint64(len(key)))
	r.buf = append(r.buf, key...)
	r.buf = binary.LittleEndian.AppendUint64(r.buf, uint64(ts))
	r.buf = append(r.buf, value...)
	return r.sum()
}

func (r *Replay) header(name, value []byte) recordDigest {
	r.buf = append(r.buf[:0], 'h')
	r.buf = binary.LittleEndian.AppendUint64(r.buf, uint64(len(name)))
	r.buf = append(r.buf, name...)
	r.buf = append(r.buf, value...)
	return r.sum()
}

func (r *Replay) line(line []byte) recordDigest {
	r.buf = append(append(r.buf[:0], 'l'), line...)
	return r.sum()
}

func (r *Replay) sum() recordDigest {
	h := sha256.Sum256(r.buf)
	return recordDigest{binary.LittleEndian.Uint64(h[:8]), binary.LittleEndian.Uint64(h[8:16])}
}

func (d recordDigest) add(o recordDigest) recordDigest {
	return recordDigest{d[0] + o[0], d[1] + o[1]}
}

func (d recordDigest) less(o recordDigest) bool {
	return d[0] < o[0] || d[0] == o[0] && d[1] < o[1]
}

// sinkHeader: a header the sink adds to a record's message, not one of the
// record's own.
func sinkHeader(name string) bool {
	switch name {
	case HeaderKey, HeaderTimestamp, HeaderID, nats.MsgIdHdr, hdrBatchID, hdrBatchSeq, hdrBatchCommit,
		jetstream.ExpectedLastSubjSeqHeader, jetstream.ExpectedLastSubjSeqSubjHeader:
		return true
	}
	return false
}
