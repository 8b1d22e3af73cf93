package netx

import (
	"bytes"
	"errors"
	"testing"

	"wasmstream.io/platform/runtime/exchange"
)

// FuzzDecodeEvent: any bytes decode to an event that encodes back to the
// same bytes, or fail as a protocol error; none panics.
func FuzzDecodeEvent(f *testing.F) {
	for _, ev := range []exchange.Event{
		exchange.Watermark{Time: -5}, exchange.Idle{Idle: true}, exchange.EndOfPartition{},
		exchange.ProcessingTime{Time: 1 << 40},
	} {
		b, err := appendEvent(nil, ev)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{tagProcessingTime, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		ev, err := decodeEvent(b)
		if err != nil {
			return
		}
		again, err := appendEvent(nil, ev)
		if err != nil {
			t.Fatalf("%v decoded from %x does not encode: %v", ev, b, err)
		}
		if !bytes.Equal(again, b) {
			t.Fatalf("%x decodes to %v, which encodes to %x", b, ev, again)
		}
	})
}

// FuzzDecodeParcel: any message of a data subject decodes to a parcel or a
// tail that encodes back to the same bytes, to a hello, or fails as a
// protocol error; none panics.
func FuzzDecodeParcel(f *testing.F) {
	for _, p := range []exchange.Parcel{
		{Kind: exchange.KindData, Data: []byte{1, 0, 0, 0, 7}, Backlog: 2},
		{Kind: exchange.KindLastFragment, Data: []byte("piece"), RecordSize: 9},
		{Kind: exchange.KindEvent, Event: exchange.EndOfPartition{}},
		{Kind: exchange.KindBacklog, Backlog: 5},
	} {
		m, err := appendParcel(nil, 3, p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(m)
	}
	f.Add(appendHello(nil))
	f.Add(appendTail(nil, 9))
	f.Fuzz(func(t *testing.T, b []byte) {
		seq, p, sig, err := decodeParcel(b, 1<<10)
		if err != nil {
			if !errors.Is(err, exchange.ErrProtocol) {
				t.Fatalf("%x: %v, not a protocol error", b, err)
			}
			return
		}
		var again []byte
		switch sig {
		case signalHello:
			return
		case signalTail:
			again = appendTail(nil, seq)
		default:
			if again, err = appendParcel(nil, seq, p); err != nil {
				t.Fatalf("%+v decoded from %x does not encode: %v", p, b, err)
			}
		}
		if !bytes.Equal(again, b) {
			t.Fatalf("%x decodes to %+v, which encodes to %x", b, p, again)
		}
	})
}

// FuzzDecodeControl: any control message decodes to an announcement that
// encodes back to the same bytes, or fails as a protocol error.
func FuzzDecodeControl(f *testing.F) {
	f.Add(appendControl(nil, announcement{credits: 4, released: 2, received: 9}))
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := decodeControl(b)
		if err != nil {
			if !errors.Is(err, exchange.ErrProtocol) {
				t.Fatalf("%x: %v, not a protocol error", b, err)
			}
			return
		}
		if again := appendControl(nil, a); !bytes.Equal(again, b) {
			t.Fatalf("%x decodes to %+v, which encodes to %x", b, a, again)
		}
	})
}
