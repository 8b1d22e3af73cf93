package exchange

import "wasmstream.io/platform/abi"

// Kind says what a buffer carries.
type Kind uint8

const (
	// KindData is an abi input frame of whole records.
	KindData Kind = iota
	// KindFragment and KindLastFragment carry consecutive pieces of one
	// encoded record that is larger than a buffer.
	KindFragment
	KindLastFragment
	// KindEvent carries an in-band control event and no bytes.
	KindEvent
	// KindBacklog is no buffer: only a Parcel has it, announcing the
	// sender's backlog on a channel that waits for credit (remote.go).
	KindBacklog
)

// Buffer is a unit of exchange: an abi input frame of records or one event.
// The consumer that got it from Gate.Next owns it until Recycle; records read
// from it alias its bytes until then.
type Buffer struct {
	data  []byte
	event Event
	kind  Kind
	// floating says which credit a delivered data buffer holds: a floating
	// buffer of the gate, or an exclusive credit of its channel.
	floating bool
	// overtakes marks an event sent by Writer.OvertakeEvent.
	overtakes bool
	// size is the encoded record size, on the first fragment of a record.
	size int
	ch   *InputChannel
	// pool is where the buffer returns on Recycle: its writer's pool, or
	// its gate's pool of received buffers (remote.go); nil for a
	// reassembled record or an overtaking event, which hold no pool buffer.
	pool chan *Buffer
	// freed is signalled when the buffer returns to its writer's pool (nil
	// for a gate's buffer): see Writer.Freed.
	freed chan struct{}
	// next links the buffer in its channel's queue, or in an outbox
	// channel's list of buffers in flight.
	next *Buffer
	rd   abi.InputReader
}

// Channel is the index of the buffer's input channel in its gate.
func (b *Buffer) Channel() int { return b.ch.index }

// Event is the buffer's event, or nil for a buffer of records.
func (b *Buffer) Event() Event { return b.event }

// Next decodes the buffer's next record into rec, whose slices alias the
// buffer until Recycle. It returns false after the last record, and at once
// for an event.
func (b *Buffer) Next(rec *abi.Record) bool { return b.rd.Next(rec) }

// Frame is the buffer's records as an abi input frame (nil for an event),
// valid until Recycle.
func (b *Buffer) Frame() []byte {
	if b.kind == KindEvent {
		return nil
	}
	return b.data
}

// Recycle gives the buffer back: its credit to its channel or its floating
// buffer to the gate, and its memory to the writer's pool (or, for a buffer
// an Inbox received, to the gate's pool). It must be called exactly once,
// from any goroutine, when the consumer is done with the buffer.
func (b *Buffer) Recycle() {
	if b.pool == nil {
		return
	}
	if b.ch == nil {
		panic("exchange: buffer recycled twice")
	}
	b.ch.gate.recycled(b)
	b.ch = nil
	b.event = nil
	b.data = b.data[:0]
	b.rd = abi.InputReader{}
	// A writer's pool has room for all its buffers; a gate's pool of
	// received buffers keeps what fits and lets the rest go.
	freed := b.freed
	select {
	case b.pool <- b:
		signal(freed)
	default:
	}
}

// signal wakes a writer waiting on Freed, if any (freed may be nil).
func signal(freed chan struct{}) {
	select {
	case freed <- struct{}{}:
	default:
	}
}
