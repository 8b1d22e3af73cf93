package udfs

import (
	"context"
	"log/slog"
	"reflect"
	"testing"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/host"
	"wasmstream.io/platform/internal/nexmark"
)

// nexmarkCases are events that leave the generator's layout, or are not
// events: the modules read them with their JSON readers, or fail them.
var nexmarkCases = []string{
	`{"event_type":2,"person":null,"auction":null,"bid":{"auction":246,"bidder":7,"price":-5,"channel":"A\"B","url":"u","dateTime":3,"extra":"x\ny"},"dateTime":3}`,
	` { "event_type" : 2 , "bid" : { "extra" : "e", "dateTime" : 4, "url" : "", "channel" : "c", "price" : 12345678901234567, "bidder" : 1, "auction" : 123 } } `,
	`{"event_type":2,"person":null,"auction":null,"bid":{"auction":01,"bidder":7,"price":1,"channel":"c","url":"u","dateTime":3,"extra":""},"dateTime":3}`,
	`{"event_type":2,"person":null,"auction":null,"bid":{"auction":1,"bidder":7,"price":1.5,"channel":"c","url":"u","dateTime":3,"extra":""},"dateTime":3}`,
	`{"event_type":2,"bid":{"auction":1,"bidder":7,"price":1,"channel":5,"url":"u","dateTime":3,"extra":""}}`,
	`{"event_type":2,"bid":{"auction":1,"bidder":7,"price":1,"channel":"c","url":"u","extra":""}}`,
	// Escapes and control characters past the first sixteen bytes of a
	// string, where the reader's wide scan finds them.
	`{"event_type":2,"person":null,"auction":null,"bid":{"auction":369,"bidder":7,"price":1,"channel":"abcdefghijklmnopqrstu\"v","url":"abcdefghijklmnopqrstuvwxyz0123456789\\x","dateTime":3,"extra":"abcdefghijklmnopq\u0001"},"dateTime":3}`,
	"{\"event_type\":2,\"person\":null,\"auction\":null,\"bid\":{\"auction\":492,\"bidder\":7,\"price\":1,\"channel\":\"abcdefghijklmnopqrstuvwxyz\x01\",\"url\":\"u\",\"dateTime\":3,\"extra\":\"\"},\"dateTime\":3}",
	// Integers the fast readers must refuse (-0, 19 digits) or read at
	// each width around their eight-byte steps, in the generator's layout.
	`{"event_type":2,"person":null,"auction":null,"bid":{"auction":123,"bidder":-0,"price":-0,"channel":"c","url":"u","dateTime":3,"extra":""},"dateTime":3}`,
	`{"event_type":2,"person":null,"auction":null,"bid":{"auction":12345678,"bidder":123456789,"price":1234567890123456,"channel":"c","url":"u","dateTime":12345678901234567,"extra":""},"dateTime":123456789012345678}`,
	`{"event_type":2,"person":null,"auction":null,"bid":{"auction":246,"bidder":-98765432,"price":1000000000000000000,"channel":"c","url":"u","dateTime":100000000,"extra":""},"dateTime":9}`,
	`{"event_type":2,"person":null,"auction":null,"bid":{"auction":0,"bidder":10,"price":90000009,"channel":"c","url":"u","dateTime":1,"extra":""},"dateTime":1700000000000}`,
	`{"event_type":2,"bid":null}`,
	`{"event_type":1,"auction":{"id":1}}`,
	`{"event_type":7}`,
	`[]`,
	``,
}

// TestNexmarkAcrossLanguages runs the flat maps that udfs/nexmark-rust has
// of udfs/nexmark over generated events and over nexmarkCases, and checks
// that both modules answer byte for byte the same entries.
func TestNexmarkAcrossLanguages(t *testing.T) {
	ctx := context.Background()
	g, err := nexmark.New(nexmark.Config{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	var events, cases []abi.Record
	for i := range int64(3000) {
		events = append(events, abi.Record{Value: g.AppendEvent(nil, i), Timestamp: g.Timestamp(i)})
	}
	for i, c := range nexmarkCases {
		cases = append(cases, abi.Record{Key: []byte("k"), Value: []byte(c), Timestamp: int64(i)})
	}
	h, err := host.New(ctx, host.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	goModule := guest(t, h, "nexmark")
	for _, lang := range []string{"rust"} {
		other := guest(t, h, "nexmark-"+lang)
		for _, fn := range []string{"bids", "q0", "q1", "q2"} {
			for _, in := range []struct {
				name string
				recs []abi.Record
			}{{"events", events}, {"cases", cases}} {
				t.Run(lang+"/"+fn+"/"+in.name, func(t *testing.T) {
					want, got := goModule.run(t, fn, in.recs), other.run(t, fn, in.recs)
					if len(want) == 0 {
						t.Fatal("no entries")
					}
					if !reflect.DeepEqual(got, want) {
						i := firstDifference(got, want)
						t.Fatalf("%d entries, want %d; entry %d differs: got %s", len(got), len(want), i, jsonEntryAt(got, want, i))
					}
				})
			}
		}
	}
}

// hostGuest is a module compiled by the platform's host, with a guest to
// call it: the host provides the state imports that the test sandbox does
// not.
type hostGuest struct {
	mod  *host.Module
	pool *host.Guest
}

func guest(t *testing.T, h *host.Host, name string) hostGuest {
	t.Helper()
	mod, err := h.Compile(context.Background(), wasmOf(t, name))
	if err != nil {
		t.Fatal(err)
	}
	pool := mod.NewGuest(host.InstanceConfig{})
	t.Cleanup(func() { pool.Close(context.Background()) })
	return hostGuest{mod, pool}
}

// run calls the function fn over recs in one frame and returns the output
// entries, copied.
func (g hostGuest) run(t *testing.T, fn string, recs []abi.Record) []abi.Entry {
	t.Helper()
	return g.runFrame(t, fn, frame(recs), uint32(len(recs)))
}

// runFrame calls the function fn over the frame f of inputs records or
// groups and returns the output entries, copied.
func (g hostGuest) runFrame(t *testing.T, fn string, f []byte, inputs uint32) []abi.Entry {
	t.Helper()
	index := g.mod.Description.Lookup(fn)
	if index < 0 {
		t.Fatalf("no function %q", fn)
	}
	out, err := g.pool.Call(context.Background(), index, f)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := decode(out, inputs)
	if err != nil {
		t.Fatal(err)
	}
	return entries
}

// nexmarkGroups are grouped frames' groups for the window process and join
// functions that udfs/nexmark-rust has: each a function and its groups'
// records, left and (for a join) right. Values in the platform's layout
// take the readers' fast paths; the others their JSON fallbacks and errors.
var nexmarkGroups = []struct {
	fn          string
	left, right [][]string
}{
	{"q5_hot", [][]string{
		{`{"key":"1001","window_start":0,"window_end":10000,"value":3}`, `{"key":"1002","window_start":0,"window_end":10000,"value":5}`, `{"key":"1003","window_start":0,"window_end":10000,"value":5}`},
		{` { "value" : 2 , "window_end" : 12000 , "key" : "7" , "window_start" : 2000 } `, `{"key":"1\u0030","window_start":2000,"window_end":12000,"value":1}`},
		{`{"key":"5","window_start":0,"window_end":1}`},
		{`{"key":"x","window_start":0,"window_end":1,"value":1}`},
		{`{"key":5,"window_start":0,"window_end":1,"value":1}`},
	}, nil},
	{"q7", [][]string{
		{`{"window_start":0,"window_end":10000,"value":77}`},
		{`{"value":77, "window_end":20000}`},
		{`{"window_start":0,"value":77}`},
		{`{"window_start":0,"window_end":10000,"value":77}`},
	}, [][]string{
		{`{"auction":1001,"bidder":1002,"price":77,"channel":"Google","url":"https://x/y","dateTime":5000,"extra":"abc"}`, `{"auction":1005,"bidder":1006,"price":77,"channel":"c","url":"u","dateTime":6000,"extra":""}`},
		{` {"extra":"a\"b","dateTime":15000,"url":"u","channel":"c","price":77,"bidder":3,"auction":4} `},
		{`{"auction":1,"bidder":2,"price":77,"channel":"c","url":"u","dateTime":1,"extra":""}`},
		{`{"auction":1,"bidder":2,"price":77,"channel":"c","url":"u","extra":""}`},
	}},
}

// TestNexmarkGroupedAcrossLanguages calls the window process and join
// functions of udfs/nexmark-rust and udfs/nexmark over nexmarkGroups, one
// grouped frame per function, and checks that both modules answer byte for
// byte the same rows and errors (answers: the SDKs write an interval
// join's inherited timestamp differently, one explicitly, one not).
func TestNexmarkGroupedAcrossLanguages(t *testing.T) {
	ctx := context.Background()
	h, err := host.New(ctx, host.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	goModule, rust := guest(t, h, "nexmark"), guest(t, h, "nexmark-rust")
	appendSide := func(f []byte, values []string) []byte {
		for i, v := range values {
			f = abi.AppendRecord(f, &abi.Record{Value: []byte(v), Timestamp: int64(1000 * i)})
		}
		return f
	}
	for _, c := range nexmarkGroups {
		t.Run(c.fn, func(t *testing.T) {
			f := abi.AppendFrameHead(nil, abi.FrameHead{Watermark: abi.NoWatermark, Groups: uint32(len(c.left))})
			for i, left := range c.left {
				g := abi.GroupHead{Key: []byte("k"), Flags: abi.GroupWindow, WindowStart: 0, WindowEnd: 10000}
				if c.right != nil {
					g = abi.GroupHead{Key: []byte("77"), Flags: abi.GroupTwoSided}
				}
				f = appendSide(abi.AppendGroupHead(f, &g, uint32(len(left))), left)
				if c.right != nil {
					f = appendSide(abi.AppendSide(f, uint32(len(c.right[i]))), c.right[i])
				}
			}
			want, got := answers(goModule.runFrame(t, c.fn, f, uint32(len(c.left)))), answers(rust.runFrame(t, c.fn, f, uint32(len(c.left))))
			errs := 0
			for _, e := range want {
				if e.Tag == abi.TagError {
					errs++
				}
			}
			if errs == 0 || errs == len(want) {
				t.Fatalf("%d entries, %d of them errors: want both rows and errors", len(want), errs)
			}
			if !reflect.DeepEqual(got, want) {
				i := firstDifference(got, want)
				t.Fatalf("%d entries, want %d; entry %d differs: got %s", len(got), len(want), i, jsonEntryAt(got, want, i))
			}
		})
	}
}

// answers are entries without their flags and timestamps.
func answers(entries []abi.Entry) []abi.Entry {
	for i := range entries {
		entries[i].Flags, entries[i].Timestamp = 0, 0
	}
	return entries
}
