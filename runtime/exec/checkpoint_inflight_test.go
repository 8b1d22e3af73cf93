package exec

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/checkpoint"
)

// TestAlignerUnaligned: an unaligned barrier is taken at the first channel,
// blocks none, and completes when the others deliver it or end.
func TestAlignerUnaligned(t *testing.T) {
	b := func(id int64) checkpoint.Barrier { return checkpoint.Barrier{ID: id, Kind: checkpoint.KindCheckpoint} }
	type step struct {
		channel int
		barrier int64 // 0: the channel ends
		first   bool
		done    bool
		waiting []bool
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"three channels", []step{
			{1, 1, true, false, []bool{true, false, true}},
			{0, 1, false, false, []bool{false, false, true}},
			{2, 1, false, true, []bool{false, false, false}},
		}},
		{"an end completes it", []step{
			{0, 1, true, false, []bool{false, true, true}},
			{1, 0, false, false, []bool{false, false, true}},
			{2, 0, false, true, []bool{false, false, false}},
		}},
		{"a newer barrier starts over", []step{
			{0, 1, true, false, []bool{false, true, true}},
			{1, 2, true, false, []bool{true, false, true}},
			{0, 1, false, false, []bool{true, false, true}},
			{0, 2, false, false, []bool{false, false, true}},
			{2, 2, false, true, []bool{false, false, false}},
		}},
		{"the other channels ended before", []step{
			{1, 0, false, false, []bool{false, false, false}},
			{2, 0, false, false, []bool{false, false, false}},
			{0, 1, true, true, []bool{false, false, false}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newAligner(3, true)
			g := &blockLog{}
			for i, s := range tc.steps {
				var first, done bool
				if s.barrier == 0 {
					_, _, done = a.ended(g, s.channel)
				} else {
					first, done, _ = a.barrier(g, s.channel, b(s.barrier), true)
				}
				var waiting []bool
				for ch := range 3 {
					waiting = append(waiting, a.waiting(ch))
				}
				if first != s.first || done != s.done || fmt.Sprint(waiting) != fmt.Sprint(s.waiting) {
					t.Fatalf("step %d: first %v done %v waiting %v, want %v %v %v", i, first, done, waiting, s.first, s.done, s.waiting)
				}
			}
			if len(g.calls) > 0 {
				t.Fatalf("an unaligned checkpoint blocked channels: %v", g.calls)
			}
		})
	}
}

// blockLog records Block and Unblock calls.
type blockLog struct{ calls []string }

func (g *blockLog) Block(ch int)   { g.calls = append(g.calls, fmt.Sprintf("block %d", ch)) }
func (g *blockLog) Unblock(ch int) { g.calls = append(g.calls, fmt.Sprintf("unblock %d", ch)) }

// frameOf encodes records with the given values as an abi input frame.
func frameOf(values ...string) []byte {
	f := abi.AppendInputHeader(nil, uint32(len(values)))
	for _, v := range values {
		f = abi.AppendRecord(f, &abi.Record{Key: []byte("k"), Value: []byte(v), Timestamp: 7})
	}
	return f
}

func TestInFlightRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name    string
		shape   inFlightShape
		entries []inFlightEntry
	}{
		{"empty source", inFlightShape{outputs: []int{2}}, nil},
		{"source output", inFlightShape{outputs: []int{2}}, []inFlightEntry{
			{writer: 0, channel: 1, frame: frameOf("a", "b")}, {writer: 0, channel: 0, frame: frameOf("c")},
		}},
		{"input and outputs", inFlightShape{inputs: 3, outputs: []int{1, 4}}, []inFlightEntry{
			{writer: 1, channel: 3, frame: frameOf("x")},
			{writer: -1, channel: 2, frame: frameOf("y", "z")},
			{writer: -1, channel: 0, frame: frameOf()},
			{writer: 0, channel: 0, frame: frameOf(strings.Repeat("v", 300))},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newInFlightEncoder(tc.shape)
			for _, en := range tc.entries {
				if en.writer < 0 {
					e.input(en.channel, en.frame)
				} else {
					e.output(en.writer, en.channel, en.frame)
				}
			}
			d, err := decodeInFlight(e.finish())
			if err != nil {
				t.Fatal(err)
			}
			if !d.shape.equal(tc.shape) || len(d.entries) != len(tc.entries) {
				t.Fatalf("decoded %s with %d entries, want %s with %d", d.shape, len(d.entries), tc.shape, len(tc.entries))
			}
			for i, en := range d.entries {
				want := tc.entries[i]
				if en.writer != want.writer || en.channel != want.channel || !bytes.Equal(en.frame, want.frame) {
					t.Fatalf("entry %d: writer %d channel %d %x, want %d %d %x", i, en.writer, en.channel, en.frame, want.writer, want.channel, want.frame)
				}
			}
		})
	}
}

func TestInFlightDecodeErrors(t *testing.T) {
	valid := func(f func(e *inFlightEncoder)) []byte {
		e := newInFlightEncoder(inFlightShape{inputs: 2, outputs: []int{3}})
		f(e)
		return e.finish()
	}
	good := valid(func(e *inFlightEncoder) { e.input(1, frameOf("a")) })
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, `no "WSIF" header`},
		{"version", append([]byte("WSIF"), 9), "version 9, want 1"},
		{"truncated", good[:len(good)-1], "truncated, no end mark"},
		{"trailing", append(good[:len(good):len(good)], 0), "1 bytes after the end"},
		{"input channel", valid(func(e *inFlightEncoder) { e.input(2, frameOf("a")) }), "input channel 2 out of range (2)"},
		{"writer", valid(func(e *inFlightEncoder) { e.output(1, 0, frameOf("a")) }), "writer 1 out of range (1)"},
		{"output channel", valid(func(e *inFlightEncoder) { e.output(0, 3, frameOf("a")) }), "output channel 3 out of range (3)"},
		{"frame", valid(func(e *inFlightEncoder) { e.input(0, frameOf("a")[:10]) }), "entry 0: frame"},
		{"frame length", append(good[:len(good)-1:len(good)-1], entryInput, 0, 0x7f), "frame of 127 bytes"},
		{"tag", append(good[:len(good)-1:len(good)-1], 9), "unknown tag 9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decodeInFlight(tc.data)
			if !errors.Is(err, errInFlightData) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("decode: %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// FuzzDecodeInFlight: the decoder never panics, and what it accepts
// encodes back to the same bytes.
func FuzzDecodeInFlight(f *testing.F) {
	e := newInFlightEncoder(inFlightShape{inputs: 2, outputs: []int{1, 3}})
	e.input(1, frameOf("a", "b"))
	e.output(1, 2, frameOf("c"))
	f.Add(e.finish())
	f.Add(newInFlightEncoder(inFlightShape{}).finish())
	f.Add([]byte("WSIF\x01\x00\x00\x01\x01"))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := decodeInFlight(data)
		if err != nil {
			return
		}
		re := newInFlightEncoder(d.shape)
		for _, en := range d.entries {
			if en.writer < 0 {
				re.input(en.channel, en.frame)
			} else {
				re.output(en.writer, en.channel, en.frame)
			}
		}
		if got := re.finish(); !bytes.Equal(got, data) {
			t.Fatalf("re-encoded %x, decoded from %x", got, data)
		}
	})
}
