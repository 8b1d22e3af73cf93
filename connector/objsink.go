package connector

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/abi"
)

// ObjectSinkConfig configures one subtask of an object store sink.
type ObjectSinkConfig struct {
	Bucket string
	// Prefix starts every object's name, followed by '/'; "" for none.
	Prefix string
	// Writer names the subtask in its objects' metadata: job, sink and
	// subtask, "job.sink.3".
	Writer  string
	Subtask int
	// RollBytes and RollInterval start another object within a
	// checkpoint once the current one holds about that many bytes of
	// records, or once it is that old when a record arrives; 0: no limit.
	RollBytes    int64
	RollInterval time.Duration
	// Budget bounds the staged bytes in memory, as a TxSink's; past it
	// the parts not sealed spill to files in SpillDir.
	Budget   int64
	SpillDir string
}

// ObjectSink is an object store sink subtask, exactly once with checkpoints
// as Flink's FileSink is: Write stages records in parts (Epochs, spilling
// to disk past the budget) that a checkpoint barrier seals and names; the
// checkpoint keeps the sealed parts not yet written (Snapshot), and once it
// completes Commit writes each as one object and then the subtask's index.
// An object appears only when it is whole (the object store writes an
// object's chunks first and its description last), so that a reader
// listing the bucket never sees part of one.
//
// An object's name is fixed when its part is sealed and kept with it in
// the checkpoint: <prefix>/<yyyymmddThhmmss>-<checkpoint>-<subtask>.jsonl,
// the time (UTC) being when the part got its first record, the checkpoint
// zero-padded to ten digits so that names sort by time and then
// checkpoint, and "_<part>" (three digits) after the subtask for the second
// and later parts of a checkpoint, which sort after the first. A recovery
// writes the restored parts again under the same names: an object already
// there with the same content (size and SHA-256 digest) is kept, so that
// each part is written once whatever failed when, and one with other
// content fails the commit (ErrObjectExists: another job writes under the
// prefix) rather than be replaced. A restore that falls back past corrupt
// checkpoints leaves the objects they wrote, and drops their records from
// the replay instead (SkipCommitted): the replay's parts get new names.
//
// The index, <prefix>/_index/<subtask>.json, says which checkpoint the
// subtask last committed and which objects that commit wrote; each
// object's metadata has its writer, checkpoint, part and record count.
//
// Goroutines: the subtask's goroutine calls every method; the reader
// Snapshot returns may be read on another. Commit writes on the calling
// goroutine.
type ObjectSink struct {
	obs    jetstream.ObjectStore
	cfg    ObjectSinkConfig
	closed bool

	// parts are the parts of the next checkpoint, the last one open;
	// pending the sealed parts, named, not yet written.
	parts   []*objectPart
	pending []*Epoch
	// mem is the staged bytes in memory.
	mem int64
	now func() time.Time

	// replay, after SkipCommitted or KeepSkipping, is the lines of
	// committed objects Write drops from a replay; line and value are
	// the buffers it makes a record's line in, dropped the records it
	// dropped (objsink_fallback.go).
	replay  *Replay
	line    []byte
	value   bytes.Buffer
	dropped int64
}

// objectPart is a part of the next checkpoint: its records, when it got
// its first one and about how many bytes they hold.
type objectPart struct {
	e      *Epoch
	opened time.Time
	bytes  int64
}

// ObjectStats say what a commit or recovery wrote.
type ObjectStats struct {
	// Written objects were put; Kept were found whole already.
	Written, Kept int
	// Records counts the records of the objects written.
	Records int64
}

// NewObjectSink checks that the bucket exists and returns the sink.
func NewObjectSink(ctx context.Context, js jetstream.JetStream, cfg ObjectSinkConfig) (*ObjectSink, error) {
	if !ValidBucket(cfg.Bucket) {
		return nil, fmt.Errorf("connector: object store sink: bucket %q: want letters, digits, '-' and '_'", cfg.Bucket)
	}
	if cfg.Budget <= 0 {
		cfg.Budget = DefaultTxBudget
	}
	obs, err := js.ObjectStore(ctx, cfg.Bucket)
	switch {
	case errors.Is(err, jetstream.ErrBucketNotFound), errors.Is(err, jetstream.ErrStreamNotFound):
		return nil, fmt.Errorf("connector: object store sink: bucket %q: %w", cfg.Bucket, ErrNoBucket)
	case err != nil:
		return nil, fmt.Errorf("connector: object store sink: bucket %q: %w", cfg.Bucket, err)
	}
	return &ObjectSink{obs: obs, cfg: cfg, now: time.Now}, nil
}

// Write stages records in the open part, starting another part when the
// open one is full or old (RollBytes, RollInterval).
func (s *ObjectSink) Write(_ context.Context, recs []abi.Record) error {
	if s.closed {
		return ErrClosed
	}
	for i := range recs {
		if s.replay != nil && s.dropReplayed(&recs[i]) {
			continue
		}
		p := s.openPart()
		added := p.e.stage(&recs[i])
		p.bytes += added
		s.mem += added
		if s.cfg.RollBytes > 0 && p.bytes >= s.cfg.RollBytes {
			s.roll()
		}
	}
	if s.mem > s.cfg.Budget {
		for _, p := range s.parts {
			freed, err := p.e.spillTo(s.cfg.SpillDir)
			if err != nil {
				return err
			}
			s.mem -= freed
		}
	}
	return nil
}

// openPart is the part records go to, opened on its first record and
// rolled when RollInterval has passed since.
func (s *ObjectSink) openPart() *objectPart {
	if n := len(s.parts); n > 0 {
		p := s.parts[n-1]
		if p.e.Count == 0 || s.cfg.RollInterval <= 0 || s.now().Sub(p.opened) < s.cfg.RollInterval {
			return p
		}
		s.roll()
	}
	p := &objectPart{e: newEpoch(""), opened: s.now()}
	s.parts = append(s.parts, p)
	return p
}

// roll ends the open part; the next record opens another.
func (s *ObjectSink) roll() {
	if n := len(s.parts); n > 0 {
		s.parts[n-1].e.endBlock()
		s.parts = append(s.parts, &objectPart{e: newEpoch(""), opened: s.now()})
	}
}

// Seal closes the parts as checkpoint id's and names their objects; empty
// parts are dropped.
func (s *ObjectSink) Seal(id int64) error {
	parts := s.parts
	s.parts = nil
	k := 0
	for _, p := range parts {
		if p.e.Count == 0 {
			p.e.release()
			continue
		}
		if err := p.e.seal(id); err != nil {
			return err
		}
		p.e.Prefix = s.objectName(p.opened, id, k)
		k++
		s.pending = append(s.pending, p.e)
	}
	return nil
}

// objectName is the name of part k of checkpoint id, first written to at
// opened.
func (s *ObjectSink) objectName(opened time.Time, id int64, k int) string {
	name := fmt.Sprintf("%s-%010d-%d", opened.UTC().Format("20060102T150405"), id, s.cfg.Subtask)
	if k > 0 {
		name += fmt.Sprintf("_%03d", k)
	}
	return s.path(name + ".jsonl")
}

// path is name under the sink's prefix.
func (s *ObjectSink) path(name string) string {
	if s.cfg.Prefix == "" {
		return name
	}
	return s.cfg.Prefix + "/" + name
}

// IndexName is the name of the index of subtask in a sink with prefix.
func IndexName(prefix string, subtask int) string {
	s := ObjectSink{cfg: ObjectSinkConfig{Prefix: prefix}}
	return s.path("_index/" + strconv.Itoa(subtask) + ".json")
}

// Snapshot returns the sealed parts not yet written and the lines a
// replay is still to produce again, in the format DecodeSinkState reads;
// release must be called after the reader is done.
func (s *ObjectSink) Snapshot() (io.Reader, func(), error) {
	for _, e := range s.pending {
		e.retain()
	}
	var left []byte
	if s.replay != nil {
		left = s.replay.encode()
	}
	return encodeSinkState(append([]*Epoch(nil), s.pending...), left)
}

// Staged reports whether the sink holds records not yet written.
func (s *ObjectSink) Staged() bool {
	if len(s.pending) > 0 {
		return true
	}
	for _, p := range s.parts {
		if p.e.Count > 0 {
			return true
		}
	}
	return false
}

// Pending is the number of sealed parts not yet written.
func (s *ObjectSink) Pending() int { return len(s.pending) }

// Commit writes the objects of the sealed parts of checkpoint upTo and
// before, then the index.
func (s *ObjectSink) Commit(ctx context.Context, upTo int64) (ObjectStats, error) {
	if s.closed {
		return ObjectStats{}, ErrClosed
	}
	var due, kept []*Epoch
	for _, e := range s.pending {
		if e.ID <= upTo {
			due = append(due, e)
		} else {
			kept = append(kept, e)
		}
	}
	st, err := s.write(ctx, due)
	if err != nil {
		// The parts stay pending: the checkpoints that hold them
		// write them again after the failure.
		return st, err
	}
	s.pending = kept
	for _, e := range due {
		s.mem -= e.memBytes
		e.release()
	}
	return st, nil
}

// Recover writes the parts restored from a completed checkpoint (the
// sealed parts it kept), keeping those already written whole.
func (s *ObjectSink) Recover(ctx context.Context, epochs []*Epoch) (ObjectStats, error) {
	for _, e := range epochs {
		s.mem += e.memBytes
	}
	st, err := s.write(ctx, epochs)
	for _, e := range epochs {
		s.mem -= e.memBytes
		e.release()
	}
	return st, err
}

// Close drops everything staged; sealed parts survive in the checkpoints
// that hold them.
func (s *ObjectSink) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	for _, p := range s.parts {
		p.e.release()
	}
	for _, e := range s.pending {
		e.release()
	}
	s.parts, s.pending = nil, nil
	return nil
}
