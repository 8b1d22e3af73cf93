package connector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"strings"
	"testing"
	"time"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/internal/nexmark"
)

var generatorKinds = []string{"sequence", "clicks", "text", "nexmark"}

func newGen(t testing.TB, cfg GeneratorConfig) Source {
	t.Helper()
	g, err := NewGenerator(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	return g
}

// generate reads a bounded generator to its end, by timestamp.
func generate(t *testing.T, cfg GeneratorConfig) map[int64]string {
	t.Helper()
	out := map[int64]string{}
	for _, r := range readToEOF(t, newGen(t, cfg)) {
		if _, dup := out[r.ts]; dup {
			t.Fatalf("timestamp %d twice", r.ts)
		}
		out[r.ts] = r.value
	}
	return out
}

func TestGeneratorIsDeterministicAndSplits(t *testing.T) {
	const count = 997
	for _, kind := range generatorKinds {
		t.Run(kind, func(t *testing.T) {
			whole := generate(t, GeneratorConfig{Kind: kind, Count: count, Parallelism: 1, Seed: 7})
			if len(whole) != count {
				t.Fatalf("%d records, want %d", len(whole), count)
			}
			for i := range int64(count) {
				if _, ok := whole[BaseTimestamp+i*10]; !ok {
					t.Fatalf("no record with the timestamp of index %d", i)
				}
			}
			if again := generate(t, GeneratorConfig{Kind: kind, Count: count, Parallelism: 1, Seed: 7}); !maps.Equal(again, whole) {
				t.Fatal("a second run with the same seed differs")
			}
			union := map[int64]string{}
			for sub := range 3 {
				for ts, v := range generate(t, GeneratorConfig{Kind: kind, Count: count, Subtask: sub, Parallelism: 3, Seed: 7}) {
					if (ts-BaseTimestamp)/10%3 != int64(sub) {
						t.Fatalf("subtask %d produced index %d", sub, (ts-BaseTimestamp)/10)
					}
					union[ts] = v
				}
			}
			if !maps.Equal(union, whole) {
				t.Fatal("the union over 3 subtasks differs from one subtask's output")
			}
			if kind != "sequence" {
				if other := generate(t, GeneratorConfig{Kind: kind, Count: count, Parallelism: 1, Seed: 8}); maps.Equal(other, whole) {
					t.Fatal("another seed gives the same output")
				}
			}
		})
	}
}

func TestGeneratorValues(t *testing.T) {
	const count = 5000
	t.Run("sequence", func(t *testing.T) {
		got := generate(t, GeneratorConfig{Kind: "sequence", Count: 3, Parallelism: 1})
		want := map[int64]string{
			1_700_000_000_000: `{"seq":0,"ts":1700000000000}`,
			1_700_000_000_010: `{"seq":1,"ts":1700000000010}`,
			1_700_000_000_020: `{"seq":2,"ts":1700000000020}`,
		}
		if !maps.Equal(got, want) {
			t.Fatalf("got %v, want %v", got, want)
		}
	})
	t.Run("clicks", func(t *testing.T) {
		users := map[string]bool{}
		for ts, v := range generate(t, GeneratorConfig{Kind: "clicks", Count: count, Keys: 10, Parallelism: 1}) {
			var c struct {
				User   string `json:"user"`
				Page   string `json:"page"`
				Amount int    `json:"amount"`
				TS     int64  `json:"ts"`
			}
			if err := json.Unmarshal([]byte(v), &c); err != nil {
				t.Fatalf("%s: %v", v, err)
			}
			var k, j int
			if _, err := fmt.Sscanf(c.User+" "+c.Page, "u%d /p%d", &k, &j); err != nil || k < 0 || k >= 10 || j < 0 || j >= 100 || c.Amount < 1 || c.Amount > 1000 || c.TS != ts {
				t.Fatalf("bad click %s", v)
			}
			users[c.User] = true
		}
		if len(users) != 10 {
			t.Fatalf("%d distinct users, want all 10", len(users))
		}
	})
	t.Run("text", func(t *testing.T) {
		vocab := map[string]bool{}
		for _, w := range vocabulary {
			vocab[w] = true
		}
		capitalised := 0
		for _, line := range generate(t, GeneratorConfig{Kind: "text", Count: count, Parallelism: 1}) {
			words := strings.Fields(line)
			if len(words) < 5 || len(words) > 12 || !strings.ContainsAny(line[len(line)-1:], ".?!") {
				t.Fatalf("bad line %q", line)
			}
			for i, w := range words {
				bare := strings.TrimRight(w, ",;.?!")
				if !vocab[strings.ToLower(bare)] {
					t.Fatalf("word %q of %q not in the vocabulary", bare, line)
				}
				if i > 0 && bare != strings.ToLower(bare) {
					capitalised++
				}
			}
		}
		if capitalised == 0 {
			t.Fatal("no word after the first is capitalised")
		}
	})
	t.Run("nexmark", func(t *testing.T) {
		types := map[nexmark.Kind]int{}
		for ts, v := range generate(t, GeneratorConfig{Kind: "nexmark", Count: count, Parallelism: 1}) {
			e, err := nexmark.Decode([]byte(v))
			if err != nil || e.DateTime != ts {
				t.Fatalf("bad event %s: %v", v, err)
			}
			types[e.Type]++
		}
		want := map[nexmark.Kind]int{nexmark.KindPerson: count / 50, nexmark.KindAuction: count / 50 * 3, nexmark.KindBid: count / 50 * 46}
		if !maps.Equal(types, want) {
			t.Fatalf("event types %v, want %v", types, want)
		}
	})
}

func TestGeneratorRateStillProducesEverything(t *testing.T) {
	got := generate(t, GeneratorConfig{Kind: "sequence", Count: 40, Rate: 1_000_000, Subtask: 1, Parallelism: 2})
	want := generate(t, GeneratorConfig{Kind: "sequence", Count: 40, Subtask: 1, Parallelism: 2})
	if len(got) != 20 || !maps.Equal(got, want) {
		t.Fatalf("rate-limited output %v, want %v", got, want)
	}
}

func TestGeneratorRateWaitHonoursContext(t *testing.T) {
	g := newGen(t, GeneratorConfig{Kind: "sequence", Rate: 1, Parallelism: 1})
	var b abi.Batch
	// Index 0 is due at once, index 1 a second later.
	if err := g.Fetch(context.Background(), &b, 10, time.Hour); err != nil || b.Len() != 1 {
		t.Fatalf("first Fetch = %v with %d records, want 1 record", err, b.Len())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := g.Fetch(ctx, &b, 10, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("second Fetch = %v, want context.Canceled", err)
	}
}

func TestGeneratorEnds(t *testing.T) {
	tests := []struct {
		name       string
		cfg        GeneratorConfig
		fetchMax   int
		wantCounts []int // records per Fetch; the last Fetch returns io.EOF
	}{
		{"no index for the subtask", GeneratorConfig{Kind: "sequence", Count: 2, Subtask: 2, Parallelism: 3}, 10, []int{0}},
		{"end inside a fetch", GeneratorConfig{Kind: "sequence", Count: 5, Parallelism: 1}, 3, []int{3, 2}},
		{"end on a fetch boundary", GeneratorConfig{Kind: "sequence", Count: 6, Parallelism: 1}, 3, []int{3, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGen(t, tt.cfg)
			var b abi.Batch
			for i, want := range tt.wantCounts {
				b.Reset()
				err := g.Fetch(context.Background(), &b, tt.fetchMax, 0)
				wantErr := error(nil)
				if i == len(tt.wantCounts)-1 {
					wantErr = io.EOF
				}
				if err != wantErr || b.Len() != want {
					t.Fatalf("Fetch %d = %v with %d records, want %v with %d", i, err, b.Len(), wantErr, want)
				}
			}
			if err := g.Fetch(context.Background(), &b, tt.fetchMax, 0); err != io.EOF {
				t.Fatalf("Fetch after the end = %v, want io.EOF", err)
			}
		})
	}
}

func TestGeneratorUnboundedKeepsGoing(t *testing.T) {
	g := newGen(t, GeneratorConfig{Kind: "clicks", Parallelism: 1})
	var b abi.Batch
	for range 5 {
		b.Reset()
		if err := g.Fetch(context.Background(), &b, 1000, 0); err != nil || b.Len() != 1000 {
			t.Fatalf("Fetch = %v with %d records, want 1000", err, b.Len())
		}
	}
}

func TestGeneratorConfigErrors(t *testing.T) {
	tests := []struct {
		cfg  GeneratorConfig
		want string
	}{
		{GeneratorConfig{Kind: "stocks", Parallelism: 1}, `kind "stocks"`},
		{GeneratorConfig{Kind: "sequence"}, "parallelism 0"},
		{GeneratorConfig{Kind: "sequence", Subtask: 1, Parallelism: 1}, "subtask 1"},
		{GeneratorConfig{Kind: "sequence", Rate: -1, Parallelism: 1}, "must not be negative"},
		{GeneratorConfig{Kind: "clicks", Keys: -3, Parallelism: 1}, "keys -3"},
	}
	for _, tt := range tests {
		if _, err := NewGenerator(tt.cfg); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("NewGenerator(%+v) = %v, want an error containing %q", tt.cfg, err, tt.want)
		}
	}
}

func TestGeneratorFetchDoesNotAllocate(t *testing.T) {
	for _, kind := range generatorKinds {
		g := newGen(t, GeneratorConfig{Kind: kind, Parallelism: 1})
		var b abi.Batch
		ctx := context.Background()
		fetch := func() {
			b.Reset()
			if err := g.Fetch(ctx, &b, 256, 0); err != nil {
				t.Fatal(err)
			}
		}
		for range 4 {
			fetch() // grow the batch
		}
		if allocs := testing.AllocsPerRun(50, fetch); allocs != 0 {
			t.Errorf("%s: %v allocations per Fetch, want 0", kind, allocs)
		}
	}
}
