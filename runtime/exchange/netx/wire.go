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
//	0      version (1)
//	1      kind (exchange.Kind, or kindHello) | flagOvertakes
//	2..9   the channel's sequence number, from 1 (0 on a hello), big endian
//	10..13 the sender's backlog behind this parcel, big endian
//	14..   data: the abi input frame; fragment: the record's size (4 bytes,
//	       0 after the first fragment), then the piece; event: a tag and
//	       its fields; backlog and hello: nothing
//
// A control message is 18 bytes: the version, msgCredits, then the totals
// of credits granted and of buffers released so far, 8 bytes each, big
// endian. Totals rather than increments make a repeated or lost control
// message harmless: the next one carries everything.
const (
	wireVersion  = 1
	headerSize   = 14
	fragmentSize = 4
	controlSize  = 18
	// kindHello asks the receiver to repeat its announcements: the sender
	// is listening.
	kindHello     = 0x0f
	flagOvertakes = 0x80
	msgCredits    = 1
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

// decodeParcel decodes a message of a data subject; the parcel's Data
// aliases data. maxRecord bounds a spanning record's size.
func decodeParcel(data []byte, maxRecord int) (seq uint64, p exchange.Parcel, hello bool, err error) {
	if len(data) < headerSize {
		return 0, p, false, fmt.Errorf("%w: a message of %d bytes, shorter than a header", exchange.ErrProtocol, len(data))
	}
	if data[0] != wireVersion {
		return 0, p, false, fmt.Errorf("%w: wire version %d, want %d", exchange.ErrProtocol, data[0], wireVersion)
	}
	k := data[1] &^ flagOvertakes
	if k == kindHello {
		return 0, p, true, nil
	}
	seq = binary.BigEndian.Uint64(data[2:10])
	p = exchange.Parcel{Kind: exchange.Kind(k), Overtakes: data[1]&flagOvertakes != 0, Backlog: int(binary.BigEndian.Uint32(data[10:14]))}
	body := data[headerSize:]
	switch p.Kind {
	case exchange.KindData:
		if len(body) < 4 {
			return seq, p, false, fmt.Errorf("%w: a data buffer of %d bytes, shorter than a frame header", exchange.ErrProtocol, len(body))
		}
		p.Data = body
	case exchange.KindFragment, exchange.KindLastFragment:
		if len(body) < fragmentSize {
			return seq, p, false, fmt.Errorf("%w: a fragment without its record size", exchange.ErrProtocol)
		}
		p.RecordSize = int(binary.BigEndian.Uint32(body))
		if p.RecordSize > maxRecord {
			return seq, p, false, fmt.Errorf("%w: a record of %d bytes, the limit is %d", exchange.ErrProtocol, p.RecordSize, maxRecord)
		}
		p.Data = body[fragmentSize:]
	case exchange.KindEvent:
		p.Event, err = decodeEvent(body)
	case exchange.KindBacklog:
	default:
		err = fmt.Errorf("%w: parcel of unknown kind %d", exchange.ErrProtocol, k)
	}
	if p.Overtakes && p.Kind != exchange.KindEvent {
		err = fmt.Errorf("%w: an overtaking parcel of kind %d", exchange.ErrProtocol, k)
	}
	return seq, p, false, err
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

// appendControl encodes a receiver's announcement: the totals so far.
func appendControl(dst []byte, credits, released uint64) []byte {
	dst = append(dst, wireVersion, msgCredits)
	dst = binary.BigEndian.AppendUint64(dst, credits)
	return binary.BigEndian.AppendUint64(dst, released)
}

// decodeControl decodes a receiver's announcement.
func decodeControl(b []byte) (credits, released uint64, err error) {
	if len(b) != controlSize || b[0] != wireVersion || b[1] != msgCredits {
		return 0, 0, fmt.Errorf("%w: malformed control message of %d bytes", exchange.ErrProtocol, len(b))
	}
	return binary.BigEndian.Uint64(b[2:10]), binary.BigEndian.Uint64(b[10:18]), nil
}
