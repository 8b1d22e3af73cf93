package exec

import (
	"encoding/binary"
	"errors"
	"fmt"

	"wasmstream.io/platform/abi"
)

// blobInFlight is the kind of blob holding a task's in-flight data of an
// unaligned checkpoint.
const blobInFlight = "inflight"

// ErrInFlightBudget: a task's in-flight data for one unaligned checkpoint
// outgrew Budgets.InFlight.
var ErrInFlightBudget = errors.New("in-flight data over its budget")

// errInFlightData is wrapped by every decoding error of in-flight data.
var errInFlightData = errors.New("malformed in-flight data")

// The in-flight encoding: a magic and version, the shape of the task's
// exchange (its gate's channels, its writers and their channels), then
// entries, then entryEnd. An entry is a tag, the channel (preceded by the
// writer's index for an output entry), the length of an abi input frame
// and the frame. Numbers are unsigned varints. Entries of one channel are in
// the channel's order.
const (
	inFlightMagic   = "WSIF"
	inFlightVersion = 1

	entryEnd    = 0
	entryInput  = 1
	entryOutput = 2
)

// inFlightShape is the exchange of a task: what its in-flight data fits.
type inFlightShape struct {
	// inputs is the number of its gate's channels (0 for a source).
	inputs int
	// outputs are the channels of each of its writers.
	outputs []int
}

func (s inFlightShape) String() string {
	return fmt.Sprintf("%d input channels, output channels %v", s.inputs, s.outputs)
}

func (s inFlightShape) equal(o inFlightShape) bool {
	if s.inputs != o.inputs || len(s.outputs) != len(o.outputs) {
		return false
	}
	for i := range s.outputs {
		if s.outputs[i] != o.outputs[i] {
			return false
		}
	}
	return true
}

// inFlightEncoder builds the in-flight blob of one task and checkpoint.
type inFlightEncoder struct {
	buf     []byte
	entries int
}

func newInFlightEncoder(shape inFlightShape) *inFlightEncoder {
	e := &inFlightEncoder{buf: append([]byte(inFlightMagic), inFlightVersion)}
	e.buf = binary.AppendUvarint(e.buf, uint64(shape.inputs))
	e.buf = binary.AppendUvarint(e.buf, uint64(len(shape.outputs)))
	for _, n := range shape.outputs {
		e.buf = binary.AppendUvarint(e.buf, uint64(n))
	}
	return e
}

// input adds a frame that arrived on gate channel ch before its barrier.
func (e *inFlightEncoder) input(ch int, frame []byte) {
	e.buf = append(e.buf, entryInput)
	e.buf = binary.AppendUvarint(e.buf, uint64(ch))
	e.frame(frame)
}

// output adds a frame the barrier overtook on channel ch of writer w.
func (e *inFlightEncoder) output(w, ch int, frame []byte) {
	e.buf = append(e.buf, entryOutput)
	e.buf = binary.AppendUvarint(e.buf, uint64(w))
	e.buf = binary.AppendUvarint(e.buf, uint64(ch))
	e.frame(frame)
}

func (e *inFlightEncoder) frame(frame []byte) {
	e.buf = binary.AppendUvarint(e.buf, uint64(len(frame)))
	e.buf = append(e.buf, frame...)
	e.entries++
}

// finish ends the encoding and returns it.
func (e *inFlightEncoder) finish() []byte { return append(e.buf, entryEnd) }

// inFlightEntry is one frame of in-flight data; output entries name a
// writer, input entries do not (writer is -1).
type inFlightEntry struct {
	writer  int
	channel int
	frame   []byte
}

// inFlightData is decoded in-flight data; frames alias the encoding.
type inFlightData struct {
	shape   inFlightShape
	entries []inFlightEntry
}

// decodeInFlight checks and decodes an in-flight blob, every frame
// included, so that a replay cannot fail half way on bad bytes.
func decodeInFlight(data []byte) (*inFlightData, error) {
	d := inFlightDecoder{buf: data}
	if len(data) < len(inFlightMagic)+1 || string(data[:len(inFlightMagic)]) != inFlightMagic {
		return nil, fmt.Errorf("%w: no %q header", errInFlightData, inFlightMagic)
	}
	if v := data[len(inFlightMagic)]; v != inFlightVersion {
		return nil, fmt.Errorf("%w: version %d, want %d", errInFlightData, v, inFlightVersion)
	}
	d.off = len(inFlightMagic) + 1
	out := &inFlightData{}
	out.shape.inputs = d.count("input channels")
	writers := d.count("writers")
	for i := 0; i < writers && d.err == nil; i++ {
		out.shape.outputs = append(out.shape.outputs, d.count("output channels"))
	}
	for d.err == nil {
		tag := d.byte()
		if d.err != nil || tag == entryEnd {
			break
		}
		en := inFlightEntry{writer: -1}
		switch tag {
		case entryInput:
			en.channel = d.index("input channel", out.shape.inputs)
		case entryOutput:
			en.writer = d.index("writer", len(out.shape.outputs))
			if d.err == nil {
				en.channel = d.index("output channel", out.shape.outputs[en.writer])
			}
		default:
			d.fail("entry %d: unknown tag %d", len(out.entries), tag)
		}
		en.frame = d.bytes()
		if d.err != nil {
			break
		}
		if err := checkFrame(en.frame); err != nil {
			d.fail("entry %d: frame: %v", len(out.entries), err)
			break
		}
		out.entries = append(out.entries, en)
	}
	if d.err == nil && d.off != len(data) {
		d.fail("%d bytes after the end", len(data)-d.off)
	}
	if d.err != nil {
		return nil, d.err
	}
	return out, nil
}

// checkFrame decodes every record of an abi input frame.
func checkFrame(frame []byte) error {
	ir, err := abi.NewInputReader(frame)
	if err != nil {
		return err
	}
	var rec abi.Record
	for ir.Next(&rec) {
	}
	return ir.Err()
}

// inFlightDecoder reads the in-flight encoding; the first error sticks.
type inFlightDecoder struct {
	buf     []byte
	off     int
	err     error
	scratch [binary.MaxVarintLen64]byte
}

func (d *inFlightDecoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w at byte %d: %s", errInFlightData, d.off, fmt.Sprintf(format, args...))
	}
}

func (d *inFlightDecoder) byte() byte {
	if d.err != nil {
		return 0
	}
	if d.off >= len(d.buf) {
		d.fail("truncated, no end mark")
		return 0
	}
	d.off++
	return d.buf[d.off-1]
}

func (d *inFlightDecoder) uvarint(what string) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.buf[d.off:])
	// A number has one encoding only, so that equal data is equal bytes.
	if n <= 0 || n != len(binary.AppendUvarint(d.scratch[:0], v)) {
		d.fail("%s: bad varint", what)
		return 0
	}
	d.off += n
	return v
}

// count reads a number of things, each taking at least a byte.
func (d *inFlightDecoder) count(what string) int {
	v := d.uvarint(what)
	if d.err == nil && v > uint64(len(d.buf)) {
		d.fail("%s: %d, more than the data can hold", what, v)
		return 0
	}
	return int(v)
}

// index reads an index below n.
func (d *inFlightDecoder) index(what string, n int) int {
	v := d.uvarint(what)
	if d.err == nil && v >= uint64(n) {
		d.fail("%s %d out of range (%d)", what, v, n)
		return 0
	}
	return int(v)
}

func (d *inFlightDecoder) bytes() []byte {
	n := d.uvarint("frame length")
	if d.err == nil && n > uint64(len(d.buf)-d.off) {
		d.fail("frame of %d bytes, %d left", n, len(d.buf)-d.off)
	}
	if d.err != nil {
		return nil
	}
	b := d.buf[d.off : d.off+int(n) : d.off+int(n)]
	d.off += int(n)
	return b
}
