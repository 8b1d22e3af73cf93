package connector

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"time"

	"wasmstream.io/platform/abi"
)

// blockTarget is the size an epoch's blocks of staged records aim for.
const blockTarget = 64 << 10

// Epoch is the output of a transactional sink subtask between two
// checkpoint barriers. Once sealed it never changes: it is committed
// (published with Nats-Msg-Id prefix.id.index) when its checkpoint completes,
// and a checkpoint taken before it is fully acknowledged keeps it.
//
// Its records are blocks (u32 length | abi input frame), in a spill file
// first and then in memory. Readers (a snapshot writer on another goroutine,
// the commit) take a reference; the spill file is removed when the last one
// is released.
type Epoch struct {
	// Prefix starts the message ids: job, sink and the subtask that staged
	// the epoch.
	Prefix string
	// ID is the checkpoint that sealed the epoch.
	ID int64
	// Count is the number of records.
	Count int64
	// Since is when its commit started (zero before): no message of it
	// is older.
	Since time.Time

	blocks    [][]byte
	memBytes  int64
	spill     string
	spillSize int64
	file      *os.File
	refs      atomic.Int32

	// cur is the block being filled, n its records.
	cur []byte
	n   uint32
	// queued: handed to the committer (the subtask's goroutine owns it);
	// committed: all its messages acknowledged (TxSink.mu guards it).
	queued    bool
	committed bool
}

func newEpoch(prefix string) *Epoch {
	e := &Epoch{Prefix: prefix}
	e.refs.Store(1)
	return e
}

// stage appends a record to the open epoch and returns the memory it added.
func (e *Epoch) stage(r *abi.Record) int64 {
	before := len(e.cur)
	if e.cur == nil {
		e.cur = abi.AppendInputHeader(make([]byte, 4, blockTarget+r.Size()+8), 0)
		before = 0
	}
	e.cur = abi.AppendRecord(e.cur, r)
	e.n++
	e.Count++
	added := int64(len(e.cur) - before)
	if len(e.cur) >= blockTarget {
		e.endBlock()
	}
	return added
}

// endBlock moves the block being filled to the epoch's memory blocks.
func (e *Epoch) endBlock() {
	if e.cur == nil {
		return
	}
	binary.LittleEndian.PutUint32(e.cur, uint32(len(e.cur)-4))
	abi.SetCount(e.cur[4:], e.n)
	e.blocks = append(e.blocks, e.cur)
	e.memBytes += int64(len(e.cur))
	e.cur, e.n = nil, 0
}

// spillTo writes the epoch's memory blocks to its spill file in dir and
// returns the memory freed.
func (e *Epoch) spillTo(dir string) (int64, error) {
	if len(e.blocks) == 0 {
		return 0, nil
	}
	if e.file == nil {
		if dir != "" {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return 0, fmt.Errorf("connector: transactional sink spill: %w", err)
			}
		}
		f, err := os.CreateTemp(dir, "txsink-*.spill")
		if err != nil {
			return 0, fmt.Errorf("connector: transactional sink spill: %w", err)
		}
		e.file, e.spill = f, f.Name()
	}
	for _, b := range e.blocks {
		if _, err := e.file.Write(b); err != nil {
			return 0, fmt.Errorf("connector: transactional sink spill %s: %w", e.spill, err)
		}
		e.spillSize += int64(len(b))
	}
	freed := e.memBytes
	e.blocks, e.memBytes = nil, 0
	return freed, nil
}

// seal ends the epoch as checkpoint id's.
func (e *Epoch) seal(id int64) error {
	e.endBlock()
	e.ID = id
	if e.file != nil {
		err := e.file.Close()
		e.file = nil
		if err != nil {
			return fmt.Errorf("connector: transactional sink spill %s: %w", e.spill, err)
		}
	}
	return nil
}

func (e *Epoch) retain() { e.refs.Add(1) }

// release drops a reference; the last one removes the spill file.
func (e *Epoch) release() {
	if e.refs.Add(-1) == 0 && e.spill != "" {
		if e.file != nil {
			_ = e.file.Close()
		}
		_ = os.Remove(e.spill)
	}
}

// reader streams the sealed epoch's blocks: the spill file, then memory.
func (e *Epoch) reader() (io.Reader, func(), error) {
	parts := make([]io.Reader, 0, len(e.blocks)+1)
	closer := func() {}
	if e.spill != "" {
		f, err := os.Open(e.spill)
		if err != nil {
			return nil, nil, fmt.Errorf("connector: transactional sink spill: %w", err)
		}
		parts = append(parts, io.LimitReader(f, e.spillSize))
		closer = func() { _ = f.Close() }
	}
	for _, b := range e.blocks {
		parts = append(parts, bytes.NewReader(b))
	}
	return io.MultiReader(parts...), closer, nil
}

// each calls fn with every record of the sealed epoch, in order, and its
// index.
func (e *Epoch) each(fn func(index int64, r *abi.Record) error) error {
	rd, closeFn, err := e.reader()
	if err != nil {
		return err
	}
	defer closeFn()
	return eachRecord(bufio.NewReaderSize(rd, blockTarget), -1, fn)
}

// eachRecord decodes blocks from r until the end (limit < 0) or a zero
// length, calling fn for each record.
func eachRecord(r *bufio.Reader, limit int64, fn func(index int64, r *abi.Record) error) error {
	var (
		lenBuf [4]byte
		block  []byte
		rec    abi.Record
		ir     abi.InputReader
		index  int64
	)
	for {
		if _, err := io.ReadFull(r, lenBuf[:]); err != nil {
			if errors.Is(err, io.EOF) && limit < 0 {
				return nil
			}
			return fmt.Errorf("connector: staged records: %w", err)
		}
		n := binary.LittleEndian.Uint32(lenBuf[:])
		if n == 0 {
			return nil
		}
		if int(n) > cap(block) {
			// Grow with what arrives, not with what the length says: a
			// corrupt length must not allocate gigabytes.
			var buf bytes.Buffer
			if _, err := io.CopyN(&buf, r, int64(n)); err != nil {
				return fmt.Errorf("connector: staged records: %w", io.ErrUnexpectedEOF)
			}
			block = buf.Bytes()
		} else {
			block = block[:n]
			if _, err := io.ReadFull(r, block); err != nil {
				return fmt.Errorf("connector: staged records: %w", err)
			}
		}
		if err := ir.Reset(block); err != nil {
			return fmt.Errorf("connector: staged records: %w", err)
		}
		for ir.Next(&rec) {
			if err := fn(index, &rec); err != nil {
				return err
			}
			index++
		}
		if err := ir.Err(); err != nil {
			return fmt.Errorf("connector: staged records: %w", err)
		}
	}
}

// A sink's state is written as "WSTX" | u8 version | u32 count | epoch* |
// replay, an epoch being u16 prefix length | prefix | i64 id | i64 count |
// i64 since (unix ns, 0: not committing) | block* | u32 0, and replay the
// records a replay is still to produce again (Replay.encode; version 2 on,
// version 1 has none).
const (
	epochMagic   = "WSTX"
	epochVersion = 2
	// epochVersionNoReplay is the version before the replay section.
	epochVersionNoReplay = 1
)

// EncodeEpochs streams epochs in the snapshot format, with no replay;
// release must be called once the reader is done with.
func EncodeEpochs(epochs []*Epoch) (r io.Reader, release func(), err error) {
	return encodeSinkState(epochs, nil)
}

// encodeSinkState streams epochs and an encoded replay (nil for none).
func encodeSinkState(epochs []*Epoch, replay []byte) (r io.Reader, release func(), err error) {
	var closers []func()
	release = func() {
		for _, c := range closers {
			c()
		}
		for _, e := range epochs {
			e.release()
		}
	}
	head := binary.LittleEndian.AppendUint32(append([]byte(epochMagic), epochVersion), uint32(len(epochs)))
	parts := []io.Reader{bytes.NewReader(head)}
	for _, e := range epochs {
		var since int64
		if !e.Since.IsZero() {
			since = e.Since.UnixNano()
		}
		h := binary.LittleEndian.AppendUint16(nil, uint16(len(e.Prefix)))
		h = append(h, e.Prefix...)
		h = binary.LittleEndian.AppendUint64(h, uint64(e.ID))
		h = binary.LittleEndian.AppendUint64(h, uint64(e.Count))
		h = binary.LittleEndian.AppendUint64(h, uint64(since))
		rd, closeFn, err := e.reader()
		if err != nil {
			release()
			return nil, nil, err
		}
		closers = append(closers, closeFn)
		parts = append(parts, bytes.NewReader(h), rd, bytes.NewReader([]byte{0, 0, 0, 0}))
	}
	if replay == nil {
		replay = newReplay(0).encode()
	}
	parts = append(parts, bytes.NewReader(replay))
	return io.MultiReader(parts...), release, nil
}

// DecodeEpochs reads the epochs of a sink's state written by EncodeEpochs
// or TxSink.Snapshot into memory; see DecodeSinkState for the replay.
func DecodeEpochs(data []byte) ([]*Epoch, error) {
	epochs, _, err := DecodeSinkState(data)
	return epochs, err
}

// DecodeSinkState reads a sink's state: its epochs, and the committed
// records a replay is still to produce again (nil when none).
func DecodeSinkState(data []byte) ([]*Epoch, *Replay, error) {
	bad := func(what string) error { return fmt.Errorf("connector: staged epochs: %s", what) }
	if len(data) < 9 || string(data[:4]) != epochMagic || data[4] != epochVersion && data[4] != epochVersionNoReplay {
		return nil, nil, bad("not an epoch snapshot")
	}
	version := data[4]
	n := binary.LittleEndian.Uint32(data[5:])
	r := bufio.NewReader(bytes.NewReader(data[9:]))
	var out []*Epoch
	for range n {
		var l [2]byte
		if _, err := io.ReadFull(r, l[:]); err != nil {
			return nil, nil, bad("truncated")
		}
		prefix := make([]byte, binary.LittleEndian.Uint16(l[:]))
		var fixed [24]byte
		if _, err := io.ReadFull(r, prefix); err != nil {
			return nil, nil, bad("truncated")
		}
		if _, err := io.ReadFull(r, fixed[:]); err != nil {
			return nil, nil, bad("truncated")
		}
		e := newEpoch(string(prefix))
		e.ID = int64(binary.LittleEndian.Uint64(fixed[:]))
		count := int64(binary.LittleEndian.Uint64(fixed[8:]))
		if since := int64(binary.LittleEndian.Uint64(fixed[16:])); since != 0 {
			e.Since = time.Unix(0, since)
		}
		err := eachRecord(r, 0, func(_ int64, rec *abi.Record) error {
			e.stage(rec)
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
		if e.Count != count {
			return nil, nil, bad(fmt.Sprintf("epoch %d has %d records, its header says %d", e.ID, e.Count, count))
		}
		e.endBlock()
		out = append(out, e)
	}
	if version == epochVersionNoReplay {
		return out, nil, nil
	}
	rest, err := io.ReadAll(r)
	if err != nil {
		return nil, nil, bad(err.Error())
	}
	replay, err := decodeReplay(rest)
	if err != nil {
		return nil, nil, bad(err.Error())
	}
	return out, replay, nil
}
