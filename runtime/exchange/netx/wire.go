package netx

import (
	"encoding/binary"
	"fmt"
	"math"

	"wasmstream.io/platform/checkpoint"
	"wasmstream.io/platform/runtime/exchange"
)

// The wire format. Every message on a data subject is one parcel: a
// 14-byte header, then the body.
//
//	0      version (2)
//	1      kind (exchange.Kind, kindHello or kindTail) | flagOvertakes
//	2..9   the channel's sequence number, from 1 (0 on a hello; on a tail
//	       the last one sent), big endian
//	10..13 the sender's backlog behind this parcel, big endian
//	14..   data: the abi input frame; fragment: the record's size (4 bytes,
//	       0 after the first fragment), then the piece; event: a tag and
//	       its fields; backlog, hello and tail: nothing
//
// A control message is 26 bytes: the version, msgCredits, then the totals
// of credits granted and of buffers released so far and the last sequence
// number received, 8 bytes each, big endian. Totals rather than increments
// make a repeated or lost control message harmless: the next one carries
// everything.
const (
	wireVersion  = 2
	headerSize   = 14
	fragmentSize = 4
	controlSize  = 26
	// kindHello asks the receiver to repeat its announcements: the sender
	// is listening.
	kindHello = 0x0f
	// kindTail tells the receiver the last sequence number sent, so that
	// it finds a lost last message, which no later message would show.
	kindTail      = 0x0e
	flagOvertakes = 0x80
	msgCredits    = 1
)

// signal is what a message of a data subject is besides a parcel.
type signal uint8

const (
	// signalNone: the message is a parcel.
	signalNone signal = iota
	signalHello
	// signalTail: the sequence number is the last one sent.
	signalTail
)

// Event tags.
const (
	tagWatermark = 1 + iota
	tagIdle
	tagBarrier
	tagEnd
	tagProcessingTime
)

// appendParcel encodes p as the message of sequence number seq.
func appendParcel(dst []byte, seq uint64, p exchange.Parcel) ([]byte, error) {
	k := byte(p.Kind)
	if p.Overtakes {
		k |= flagOvertakes
	}
	dst = append(dst, wireVersion, k)
	dst = binary.BigEndian.AppendUint64(dst, seq)
	dst = binary.BigEndian.AppendUint32(dst, uint32(min(p.Backlog, math.MaxUint32)))
	switch p.Kind {
	case exchange.KindData:
		dst = append(dst, p.Data...)
	case exchange.KindFragment, exchange.KindLastFragment:
		dst = binary.BigEndian.AppendUint32(dst, uint32(p.RecordSize))
		dst = append(dst, p.Data...)
	case exchange.KindEvent:
		return appendEvent(dst, p.Event)
	case exchange.KindBacklog:
	default:
		return dst, fmt.Errorf("netx: cannot send a parcel of kind %d", p.Kind)
	}
	return dst, nil
}

// appendHello encodes a hello.
func appendHello(dst []byte) []byte {
	dst = append(dst, wireVersion, kindHello)
	return append(dst, make([]byte, headerSize-2)...)
}

// appendTail encodes a tail: last is the last sequence number sent.
func appendTail(dst []byte, last uint64) []byte {
	dst = append(dst, wireVersion, kindTail)
	dst = binary.BigEndian.AppendUint64(dst, last)
	return binary.BigEndian.AppendUint32(dst, 0)
}

// decodeParcel decodes a message of a data subject; the parcel's Data
// aliases data. maxRecord bounds a spanning record's size.
func decodeParcel(data []byte, maxRecord int) (seq uint64, p exchange.Parcel, sig signal, err error) {
	if len(data) < headerSize {
		return 0, p, signalNone, fmt.Errorf("%w: a message of %d bytes, shorter than a header", exchange.ErrProtocol, len(data))
	}
	if data[0] != wireVersion {
		return 0, p, signalNone, fmt.Errorf("%w: wire version %d, want %d", exchange.ErrProtocol, data[0], wireVersion)
	}
	k := data[1] &^ flagOvertakes
	switch {
	case k == kindHello:
		return 0, p, signalHello, nil
	case data[1] == kindTail && len(data) == headerSize && binary.BigEndian.Uint32(data[10:14]) == 0:
		return binary.BigEndian.Uint64(data[2:10]), p, signalTail, nil
	case k == kindTail:
		return 0, p, signalNone, fmt.Errorf("%w: a malformed tail of %d bytes", exchange.ErrProtocol, len(data))
	}
	seq = binary.BigEndian.Uint64(data[2:10])
	p = exchange.Parcel{Kind: exchange.Kind(k), Overtakes: data[1]&flagOvertakes != 0, Backlog: int(binary.BigEndian.Uint32(data[10:14]))}
	body := data[headerSize:]
	switch p.Kind {
	case exchange.KindData:
		if len(body) < 4 {
			return seq, p, signalNone, fmt.Errorf("%w: a data buffer of %d bytes, shorter than a frame header", exchange.ErrProtocol, len(body))
		}
		p.Data = body
	case exchange.KindFragment, exchange.KindLastFragment:
		if len(body) < fragmentSize {
			return seq, p, signalNone, fmt.Errorf("%w: a fragment without its record size", exchange.ErrProtocol)
		}
		p.RecordSize = int(binary.BigEndian.Uint32(body))
		if p.RecordSize > maxRecord {
			return seq, p, signalNone, fmt.Errorf("%w: a record of %d bytes, the limit is %d", exchange.ErrProtocol, p.RecordSize, maxRecord)
		}
		p.Data = body[fragmentSize:]
	case exchange.KindEvent:
		p.Event, err = decodeEvent(body)
	case exchange.KindBacklog:
		if len(body) != 0 {
			err = fmt.Errorf("%w: a backlog announcement with a body of %d bytes", exchange.ErrProtocol, len(body))
		}
	default:
		err = fmt.Errorf("%w: parcel of unknown kind %d", exchange.ErrProtocol, k)
	}
	if p.Overtakes && p.Kind != exchange.KindEvent {
		err = fmt.Errorf("%w: an overtaking parcel of kind %d", exchange.ErrProtocol, k)
	}
	return seq, p, signalNone, err
}

// appendEvent encodes an in-band event.
func appendEvent(dst []byte, ev exchange.Event) ([]byte, error) {
	switch e := ev.(type) {
	case exchange.Watermark:
		dst = append(dst, tagWatermark)
		return binary.BigEndian.AppendUint64(dst, uint64(e.Time)), nil
	case exchange.Idle:
		b := byte(0)
		if e.Idle {
			b = 1
		}
		return append(dst, tagIdle, b), nil
	case exchange.Barrier:
		if len(e.Kind) > math.MaxUint8 {
			return dst, fmt.Errorf("netx: barrier %d: kind %q too long", e.ID, e.Kind)
		}
		dst = append(dst, tagBarrier)
		dst = binary.BigEndian.AppendUint64(dst, uint64(e.ID))
		stop := byte(0)
		if e.Stop {
			stop = 1
		}
		dst = append(dst, stop, byte(len(e.Kind)))
		return append(dst, e.Kind...), nil
	case exchange.EndOfPartition:
		return append(dst, tagEnd), nil
	case exchange.ProcessingTime:
		dst = append(dst, tagProcessingTime)
		return binary.BigEndian.AppendUint64(dst, uint64(e.Time)), nil
	}
	return dst, fmt.Errorf("netx: cannot send event %T", ev)
}

// decodeEvent decodes an in-band event.
func decodeEvent(b []byte) (exchange.Event, error) {
	bad := func() (exchange.Event, error) {
		return nil, fmt.Errorf("%w: malformed event of %d bytes", exchange.ErrProtocol, len(b))
	}
	if len(b) == 0 {
		return bad()
	}
	switch b[0] {
	case tagWatermark:
		if len(b) != 9 {
			return bad()
		}
		return exchange.Watermark{Time: int64(binary.BigEndian.Uint64(b[1:]))}, nil
	case tagIdle:
		if len(b) != 2 || b[1] > 1 {
			return bad()
		}
		return exchange.Idle{Idle: b[1] == 1}, nil
	case tagBarrier:
		if len(b) < 11 || len(b) != 11+int(b[10]) || b[9] > 1 {
			return bad()
		}
		return exchange.Barrier{Barrier: checkpoint.Barrier{
			ID: int64(binary.BigEndian.Uint64(b[1:9])), Stop: b[9] == 1, Kind: checkpoint.Kind(b[11:]),
		}}, nil
	case tagEnd:
		if len(b) != 1 {
			return bad()
		}
		return exchange.EndOfPartition{}, nil
	case tagProcessingTime:
		if len(b) != 9 {
			return bad()
		}
		return exchange.ProcessingTime{Time: int64(binary.BigEndian.Uint64(b[1:]))}, nil
	}
	return nil, fmt.Errorf("%w: event of unknown tag %d", exchange.ErrProtocol, b[0])
}

// announcement is a receiver's totals so far: credits granted, buffers
// released, and the last sequence number received in order.
type announcement struct {
	credits, released, received uint64
}

// appendControl encodes a receiver's announcement.
func appendControl(dst []byte, a announcement) []byte {
	dst = append(dst, wireVersion, msgCredits)
	dst = binary.BigEndian.AppendUint64(dst, a.credits)
	dst = binary.BigEndian.AppendUint64(dst, a.released)
	return binary.BigEndian.AppendUint64(dst, a.received)
}

// decodeControl decodes a receiver's announcement.
func decodeControl(b []byte) (announcement, error) {
	if len(b) != controlSize || b[0] != wireVersion || b[1] != msgCredits {
		return announcement{}, fmt.Errorf("%w: malformed control message of %d bytes", exchange.ErrProtocol, len(b))
	}
	return announcement{binary.BigEndian.Uint64(b[2:10]), binary.BigEndian.Uint64(b[10:18]), binary.BigEndian.Uint64(b[18:26])}, nil
}
