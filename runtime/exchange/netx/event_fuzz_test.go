package netx

import (
	"bytes"
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
