package nexmark_test

import (
	"bytes"
	"context"
	"io"
	"maps"
	"testing"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/connector"
	"wasmstream.io/platform/internal/nexmark"
)

func newGen(t *testing.T, c nexmark.Config) *nexmark.Generator {
	t.Helper()
	g, err := nexmark.New(c)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func event(t *testing.T, g *nexmark.Generator, i int64) nexmark.Event {
	t.Helper()
	data := g.AppendEvent(nil, i)
	e, err := nexmark.Decode(data)
	if err != nil {
		t.Fatalf("event %d: %s: %v", i, data, err)
	}
	return e
}

func TestGeneratorIsDeterministic(t *testing.T) {
	a, b := newGen(t, nexmark.Config{Seed: 3}), newGen(t, nexmark.Config{Seed: 3})
	other := newGen(t, nexmark.Config{Seed: 4})
	same := 0
	for i := range int64(2000) {
		x := a.AppendEvent(nil, i)
		if y := b.AppendEvent(nil, i); !bytes.Equal(x, y) {
			t.Fatalf("event %d differs between two generators of one config:\n%s\n%s", i, x, y)
		}
		if bytes.Equal(x, other.AppendEvent(nil, i)) {
			same++
		}
	}
	if same != 0 {
		t.Fatalf("%d of 2000 events are the same with another seed", same)
	}
	// In reverse order, the events are the same: each is a function of
	// its index.
	for i := int64(1999); i >= 0; i -= 7 {
		if !bytes.Equal(a.AppendEvent(nil, i), b.AppendEvent(nil, i)) {
			t.Fatalf("event %d differs when produced out of order", i)
		}
	}
}

func TestGeneratorMix(t *testing.T) {
	tests := []struct {
		name  string
		cfg   nexmark.Config
		count int64
		want  []nexmark.Kind // the first block's kinds, in order
	}{
		{"default 1:3:46", nexmark.Config{}, 50, append([]nexmark.Kind{0, 1, 1, 1}, repeatKind(nexmark.KindBid, 46)...)},
		{"2:3:5", nexmark.Config{PersonProportion: 2, AuctionProportion: 3, BidProportion: 5}, 10,
			[]nexmark.Kind{0, 0, 1, 1, 1, 2, 2, 2, 2, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGen(t, tt.cfg)
			for block := range int64(3) {
				for off, want := range tt.want {
					i := block*tt.count + int64(off)
					if k := g.Kind(i); k != want || event(t, g, i).Type != want {
						t.Fatalf("event %d is kind %d, want %d", i, k, want)
					}
				}
			}
		})
	}
}

func repeatKind(k nexmark.Kind, n int) []nexmark.Kind {
	out := make([]nexmark.Kind, n)
	for i := range out {
		out[i] = k
	}
	return out
}

// TestGeneratorIDSpaces checks every id of 20000 events against the model's
// spaces: persons and auctions numbered in order from 1000; sellers and
// bidders among the ActivePeople latest persons and 10 ahead, or hot;
// auctions bid for among the InFlightAuctions before the latest, it, and
// 10 ahead, or hot.
func TestGeneratorIDSpaces(t *testing.T) {
	for _, cfg := range []nexmark.Config{{Seed: 1}, {Seed: 2, ActivePeople: 5, InFlightAuctions: 7, HotSellersRatio: 1, HotAuctionsRatio: 1}} {
		g := newGen(t, cfg)
		c := g.Config()
		var persons, auctions int64 // created so far
		hot := map[string]int{}
		inPeople := func(id int64) bool {
			first := max(persons-int64(c.ActivePeople), 0) + 1000
			return id >= first && id < persons+1000+10
		}
		for i := range int64(20000) {
			e := event(t, g, i)
			if e.DateTime != 1_700_000_000_000+10*i {
				t.Fatalf("event %d at %d", i, e.DateTime)
			}
			switch {
			case e.Person != nil:
				if e.Person.ID != 1000+persons {
					t.Fatalf("event %d: person %d, want %d", i, e.Person.ID, 1000+persons)
				}
				persons++
			case e.Auction != nil:
				a := e.Auction
				if a.ID != 1000+auctions {
					t.Fatalf("event %d: auction %d, want %d", i, a.ID, 1000+auctions)
				}
				auctions++
				hotSeller := (persons-1)/100*100 + 1000
				if a.Seller == hotSeller {
					hot["seller"]++
				} else if !inPeople(a.Seller) {
					t.Fatalf("event %d: seller %d outside the active people (%d persons)", i, a.Seller, persons)
				}
				if a.Category < 10 || a.Category > 14 || a.Expires <= a.DateTime || a.InitialBid < 100 ||
					a.InitialBid > 100_000_000 || a.Reserve < a.InitialBid+100 {
					t.Fatalf("event %d: bad auction %+v", i, a)
				}
			default:
				b := e.Bid
				last := auctions - 1
				if b.Auction == last/100*100+1000 {
					hot["auction"]++
				} else if b.Auction < max(last-int64(c.InFlightAuctions), 0)+1000 || b.Auction > last+1000+10 {
					t.Fatalf("event %d: auction %d outside the in-flight ones (last %d)", i, b.Auction, last+1000)
				}
				if b.Bidder == (persons-1)/100*100+1001 {
					hot["bidder"]++
				} else if !inPeople(b.Bidder) {
					t.Fatalf("event %d: bidder %d outside the active people (%d persons)", i, b.Bidder, persons)
				}
				if b.Price < 100 || b.Price > 100_000_000 || b.Channel == "" || b.URL == "" {
					t.Fatalf("event %d: bad bid %+v", i, b)
				}
			}
		}
		if persons != 400 || auctions != 1200 {
			t.Fatalf("%d persons and %d auctions, want 400 and 1200", persons, auctions)
		}
		if cfg.HotSellersRatio == 0 {
			// About 3/4 of auctions and bidders, and 1/2 of bids, are hot.
			if hot["seller"] < 850 || hot["seller"] > 950 || hot["bidder"] < 13000 || hot["bidder"] > 14600 ||
				hot["auction"] < 8700 || hot["auction"] > 9700 {
				t.Fatalf("hot counts %v", hot)
			}
		}
	}
}

// TestGeneratorSharesPartition: the subtasks of a nexmark source, over
// several splits each, produce every index below the count exactly once,
// and each the event the model gives for it.
func TestGeneratorSharesPartition(t *testing.T) {
	const count = 1999
	model := newGen(t, nexmark.Config{Seed: 9, Count: count})
	for _, p := range []int{1, 3, 4} {
		seen := map[int64]int{}
		for sub := range p {
			src, err := connector.NewGenerator(connector.GeneratorConfig{Kind: "nexmark", Count: count, Seed: 9, Subtask: sub, Parallelism: p, Splits: 8})
			if err != nil {
				t.Fatal(err)
			}
			var b abi.Batch
			for {
				b.Reset()
				err := src.Fetch(context.Background(), &b, 100, 0)
				for _, r := range b.Records {
					i := (r.Timestamp - nexmark.DefaultBaseTime) / 10
					if i%8%int64(p) != int64(sub) {
						t.Fatalf("parallelism %d: subtask %d produced index %d", p, sub, i)
					}
					if want := model.AppendEvent(nil, i); !bytes.Equal(r.Value, want) {
						t.Fatalf("index %d: %s, want %s", i, r.Value, want)
					}
					seen[i]++
				}
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			_ = src.Close()
		}
		if len(seen) != count {
			t.Fatalf("parallelism %d: %d indexes, want %d", p, len(seen), count)
		}
		for i, n := range seen {
			if n != 1 || i < 0 || i >= count {
				t.Fatalf("parallelism %d: index %d produced %d times", p, i, n)
			}
		}
	}
}

func TestGeneratorTime(t *testing.T) {
	g := newGen(t, nexmark.Config{EventRate: 3, BaseTime: 5000})
	for i, want := range []int64{5000, 5333, 5666, 6000, 6333} {
		if got := g.Timestamp(int64(i)); got != want {
			t.Fatalf("event %d at %d, want %d", i, got, want)
		}
	}
	// Auctions last from 1 ms to twice the time 100 more take to come:
	// 100*50/3 events of 1/3 s.
	for i := int64(1); i < 5000; i += 50 {
		a := event(t, g, i).Auction
		if l := a.Expires - a.DateTime; l < 1 || l > 2*(g.Timestamp(i+100*50/3)-g.Timestamp(i)) {
			t.Fatalf("auction %d lasts %d ms", a.ID, l)
		}
	}
}

// TestGeneratorOutOfOrder: groups of 7 events come shuffled, each group
// the same events as in order; a last group the count cuts short stays in
// order.
func TestGeneratorOutOfOrder(t *testing.T) {
	const count = 7*20 + 3
	g := newGen(t, nexmark.Config{OutOfOrderGroup: 7, Count: count})
	inOrder := newGen(t, nexmark.Config{Count: count})
	got, want := map[string]bool{}, map[string]bool{}
	shuffled := 0
	for i := range int64(count) {
		n := g.EventNumber(i)
		if n/7 != i/7 && i < 140 || i >= 140 && n != i {
			t.Fatalf("index %d is event %d", i, n)
		}
		if n != i {
			shuffled++
		}
		if g.Timestamp(i) != inOrder.Timestamp(n) {
			t.Fatalf("index %d at %d, want event %d's time %d", i, g.Timestamp(i), n, inOrder.Timestamp(n))
		}
		got[string(g.AppendEvent(nil, i))] = true
		want[string(inOrder.AppendEvent(nil, i))] = true
	}
	if !maps.Equal(got, want) || shuffled != 120 {
		t.Fatalf("shuffled %d indexes; same events: %v", shuffled, maps.Equal(got, want))
	}
}

func TestGeneratorAllocatesNothing(t *testing.T) {
	g := newGen(t, nexmark.Config{})
	buf := make([]byte, 0, 4096)
	i := int64(0)
	if n := testing.AllocsPerRun(500, func() {
		buf = g.AppendEvent(buf[:0], i)
		i++
	}); n != 0 {
		t.Fatalf("%v allocations per event", n)
	}
}

func TestConfigErrors(t *testing.T) {
	tests := []struct {
		cfg  nexmark.Config
		want string
	}{
		{nexmark.Config{BidProportion: -1}, "nexmark: bid proportion -1: want 1 to 1048576"},
		{nexmark.Config{AvgAuctionSize: 1 << 15}, "nexmark: average auction size 32768: want 1 to 16384"},
		{nexmark.Config{OutOfOrderGroup: 1906}, "nexmark: out-of-order group 1906: must not be a multiple of 953"},
		{nexmark.Config{Count: -1}, "nexmark: count -1 and base time 1700000000000 must not be negative"},
	}
	for _, tt := range tests {
		if _, err := nexmark.New(tt.cfg); err == nil || err.Error() != tt.want {
			t.Errorf("New(%+v) = %v, want %s", tt.cfg, err, tt.want)
		}
	}
}
