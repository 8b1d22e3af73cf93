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
	index := g.mod.Description.Lookup(fn)
	if index < 0 {
		t.Fatalf("no function %q", fn)
	}
	out, err := g.pool.Call(context.Background(), index, frame(recs))
	if err != nil {
		t.Fatal(err)
	}
	entries, err := decode(out, uint32(len(recs)))
	if err != nil {
		t.Fatal(err)
	}
	return entries
}
