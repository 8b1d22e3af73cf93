package connector

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
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
// (Budget / 48 bytes) fail with ErrReplayBudget, naming the counts.
//
// What it relies on, as the exactly-once sinks do: replaying the same
// input from a checkpoint produces the same records, in any order.
func (s *TxSink) SkipCommitted(ctx context.Context, after int64, since time.Time) (int64, error) {
	if s.fence != nil {
		if err := s.advanceFence(ctx); err != nil {
			return 0, err
		}
	}
	r := newReplay(s.budget / replayEntryBytes)
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
	if r.left > 0 {
		s.replay = r
	}
	return r.left, nil
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

// replay is the multiset of committed records a replay will produce again,
// by digest.
type replay struct {
	seeds [2]maphash.Seed
	count map[recordDigest]uint32
	// left counts the records remembered and not yet seen again; max is
	// the most it may hold.
	left, max int64
	h         maphash.Hash
}

// recordDigest is 128 bits of hash of a record's key, value, timestamp and
// headers (in any order).
type recordDigest [2]uint64

func newReplay(max int64) *replay {
	return &replay{seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}, count: map[recordDigest]uint32{}, max: max}
}

// remember adds a stored message's record; false when the budget is full.
func (r *replay) remember(msg jetstream.Msg) bool {
	if r.left == r.max {
		return false
	}
	h := msg.Headers()
	ts, _ := strconv.ParseInt(h.Get(HeaderTimestamp), 10, 64)
	var d recordDigest
	for lane := range d {
		d[lane] = r.base(lane, []byte(h.Get(HeaderKey)), msg.Data(), ts)
		for name, vals := range h {
			if sinkHeader(name) {
				continue
			}
			for _, v := range vals {
				d[lane] += r.header(lane, []byte(name), []byte(v))
			}
		}
	}
	r.count[d]++
	r.left++
	return true
}

// take reports whether rec is one the replay expects, counting it off.
func (r *replay) take(rec *abi.Record) bool {
	var d recordDigest
	for lane := range d {
		d[lane] = r.base(lane, rec.Key, rec.Value, rec.Timestamp)
		for _, hd := range rec.Headers {
			d[lane] += r.header(lane, hd.Name, hd.Value)
		}
	}
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

func (r *replay) base(lane int, key, value []byte, ts int64) uint64 {
	r.h.SetSeed(r.seeds[lane])
	var n [8]byte
	r.h.Write(binary.LittleEndian.AppendUint64(n[:0], uint64(len(key))))
	r.h.Write(key)
	r.h.Write(binary.LittleEndian.AppendUint64(n[:0], uint64(ts)))
	r.h.Write(value)
	return r.h.Sum64()
}

func (r *replay) header(lane int, name, value []byte) uint64 {
	r.h.SetSeed(r.seeds[lane])
	r.h.Write(name)
	r.h.WriteByte(0)
	r.h.Write(value)
	return r.h.Sum64()
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
