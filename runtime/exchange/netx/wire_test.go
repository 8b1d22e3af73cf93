package netx

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"wasmstream.io/platform/checkpoint"
	"wasmstream.io/platform/runtime/exchange"
)

func TestWireRoundTrip(t *testing.T) {
	frame := []byte{1, 0, 0, 0, 9, 9, 9}
	for _, p := range []exchange.Parcel{
		{Kind: exchange.KindData, Data: frame, Backlog: 3},
		{Kind: exchange.KindFragment, Data: []byte("piece"), RecordSize: 1000},
		{Kind: exchange.KindFragment, Data: []byte("more")},
		{Kind: exchange.KindLastFragment, Data: []byte("last"), Backlog: 1 << 20},
		{Kind: exchange.KindEvent, Event: exchange.Watermark{Time: -1 << 40}},
		{Kind: exchange.KindEvent, Event: exchange.Idle{Idle: true}},
		{Kind: exchange.KindEvent, Event: exchange.Idle{}},
		{Kind: exchange.KindEvent, Event: exchange.Barrier{Barrier: checkpoint.Barrier{ID: 42, Kind: checkpoint.KindSavepoint, Stop: true}}},
		{Kind: exchange.KindEvent, Event: exchange.Barrier{Barrier: checkpoint.Barrier{ID: 43, Kind: checkpoint.KindCheckpoint}}, Overtakes: true},
		{Kind: exchange.KindEvent, Event: exchange.EndOfPartition{}},
		{Kind: exchange.KindEvent, Event: exchange.ProcessingTime{Time: 1 << 41}},
		{Kind: exchange.KindBacklog, Backlog: 17},
	} {
		t.Run(fmt.Sprintf("%d %v", p.Kind, p.Event), func(t *testing.T) {
			m, err := appendParcel(nil, 1<<33+5, p)
			if err != nil {
				t.Fatal(err)
			}
			seq, got, sig, err := decodeParcel(m, 1<<20)
			if err != nil || sig != signalNone || seq != 1<<33+5 {
				t.Fatalf("decode: seq %d, signal %v, %v", seq, sig, err)
			}
			if got.Kind != p.Kind || got.Event != p.Event || got.RecordSize != p.RecordSize || got.Overtakes != p.Overtakes || got.Backlog != p.Backlog || !bytes.Equal(got.Data, p.Data) {
				t.Fatalf("decoded %+v, want %+v", got, p)
			}
			if p.Kind == exchange.KindData && len(m) != headerSize+len(frame) {
				t.Fatalf("a data message of %d bytes, want the header and the frame", len(m))
			}
		})
	}
	if _, _, sig, err := decodeParcel(appendHello(nil), 0); sig != signalHello || err != nil {
		t.Fatalf("hello decoded as %v, %v", sig, err)
	}
	if seq, _, sig, err := decodeParcel(appendTail(nil, 1<<35+1), 0); sig != signalTail || seq != 1<<35+1 || err != nil {
		t.Fatalf("tail decoded as %d, %v, %v", seq, sig, err)
	}
	want := announcement{credits: 1 << 40, released: 7, received: 1<<33 + 9}
	if a, err := decodeControl(appendControl(nil, want)); err != nil || a != want {
		t.Fatalf("control decoded as %+v, %v", a, err)
	}
}

func TestWireRejects(t *testing.T) {
	good, _ := appendParcel(nil, 1, exchange.Parcel{Kind: exchange.KindFragment, Data: []byte("x"), RecordSize: 10})
	with := func(i int, b byte) []byte {
		m := append([]byte(nil), good...)
		m[i] = b
		return m
	}
	for name, m := range map[string][]byte{
		"empty":              nil,
		"unknown kind":       with(1, 9),
		"overtaking data":    with(1, flagOvertakes),
		"record too large":   with(headerSize, 0x10),
		"short frame":        {wireVersion, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1},
		"fragment size torn": good[:headerSize+2],
		"event tag":          append(with(1, byte(exchange.KindEvent))[:headerSize], 99),
		"barrier kind torn":  append(with(1, byte(exchange.KindEvent))[:headerSize], tagBarrier, 0, 0, 0, 0, 0, 0, 0, 1, 0, 5, 'c'),
		"tail with a body":   append(appendTail(nil, 3), 0),
		"overtaking tail":    with(1, kindTail|flagOvertakes)[:headerSize],
		"old wire version":   with(0, 1),
	} {
		if _, _, _, err := decodeParcel(m, 1<<20); !errors.Is(err, exchange.ErrProtocol) {
			t.Errorf("%s: %v, want ErrProtocol", name, err)
		}
	}
	if _, err := decodeControl([]byte{wireVersion, msgCredits}); !errors.Is(err, exchange.ErrProtocol) {
		t.Errorf("short control message: %v", err)
	}
	if _, err := decodeControl(appendControl(nil, announcement{})[:18]); !errors.Is(err, exchange.ErrProtocol) {
		t.Errorf("a control message of wire version 1's size: %v", err)
	}
	if _, err := appendEvent(nil, nil); err == nil {
		t.Error("a nil event encoded")
	}
}
