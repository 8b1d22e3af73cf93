package connector

import (
	"context"
	"fmt"
	"io"
	"time"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/internal/nexmark"
)

// GeneratorConfig configures one subtask of a generator source.
type GeneratorConfig struct {
	// Kind is sequence, clicks, text or nexmark.
	Kind string
	// Rate is records per second for the whole source, shared by its
	// subtasks; 0 produces as fast as possible.
	Rate int
	// Count is the number of records of the whole source; 0 is unbounded.
	Count int64
	// Keys is the number of distinct users of clicks; default 1000.
	Keys int
	// Subtask and Parallelism place this subtask among Splits splits of
	// the global indexes: split s holds the indexes n with n mod Splits =
	// s, and the subtask reads the splits s with s mod Parallelism =
	// Subtask, in global index order, below Count. Splits is at least
	// Parallelism; 0 is Parallelism (the subtask then produces Subtask,
	// Subtask+Parallelism, ...). A job keeps its splits across
	// parallelisms, so that positions carry over.
	Subtask, Parallelism, Splits int
	// Start is where each split resumes, as Positions reported it: the
	// next global index of the split. Splits it does not name start at
	// their first index.
	Start map[string]uint64
	// Seed makes the output reproducible: a record is a function of the
	// seed and its global index only.
	Seed int64
	// Nexmark configures the nexmark kind's model; its zero fields take
	// the model's defaults, its event rate the source's Rate when set,
	// and its Count and Seed are the source's.
	Nexmark nexmark.Config
}

// BaseTimestamp is the event time of the record with global index 0; the
// record with index n has BaseTimestamp + 10*n milliseconds (for nexmark,
// the time its model gives, by default the same).
const BaseTimestamp int64 = 1_700_000_000_000

// tsStep is the event-time distance between consecutive global indexes.
const tsStep = 10

const defaultKeys = 1000

// generator produces the records of one subtask.
type generator struct {
	kind  kind
	rate  int64
	count int64
	keys  int
	seed  uint64
	// splits is the number of splits; own are the subtask's, ascending,
	// and pos the next global index of each.
	splits int64
	own    []int64
	pos    []int64
	// next is the global index considered next, that of split own[at] in
	// the block of indexes from block*splits.
	next, block int64
	at          int
	// origin is the first index due when the rate's clock starts: the
	// resumed position, 0 for a fresh start.
	origin int64
	start  time.Time
	timer  *time.Timer
	rng    rng // seeded for each record from Seed and its index
	// nexmark is the model of the nexmark kind, which also gives the
	// records' timestamps.
	nexmark *nexmark.Generator
}

// kind writes the value of the record with global index n.
type kind func(g *generator, dst []byte, n, ts int64) []byte

var kinds = map[string]kind{
	"sequence": sequenceValue,
	"clicks":   clicksValue,
	"text":     textValue,
	"nexmark":  nexmarkValue,
}

// NewGenerator returns the generator source subtask cfg describes.
func NewGenerator(cfg GeneratorConfig) (Source, error) {
	k, ok := kinds[cfg.Kind]
	if !ok {
		return nil, fmt.Errorf("connector: generator kind %q: want sequence, clicks, text or nexmark", cfg.Kind)
	}
	if err := checkSubtask(cfg.Subtask, cfg.Parallelism); err != nil {
		return nil, fmt.Errorf("connector: generator %s: %w", cfg.Kind, err)
	}
	if cfg.Rate < 0 || cfg.Count < 0 || cfg.Keys < 0 {
		return nil, fmt.Errorf("connector: generator %s: rate %d, count %d and keys %d must not be negative", cfg.Kind, cfg.Rate, cfg.Count, cfg.Keys)
	}
	keys := cfg.Keys
	if keys == 0 {
		keys = defaultKeys
	}
	g := &generator{kind: k, rate: int64(cfg.Rate), count: cfg.Count, keys: keys, seed: uint64(cfg.Seed)}
	if err := g.place(cfg); err != nil {
		return nil, fmt.Errorf("connector: generator %s: %w", cfg.Kind, err)
	}
	if cfg.Kind == "nexmark" {
		var err error
		if g.nexmark, err = newNexmark(cfg); err != nil {
			return nil, fmt.Errorf("connector: generator %s: %w", cfg.Kind, err)
		}
	}
	g.timer = time.NewTimer(time.Hour)
	g.timer.Stop()
	return g, nil
}

func (g *generator) exhausted() bool { return g.count > 0 && g.next >= g.count }

// Fetch appends the next records due. Without a rate every call appends max
// records (fewer at the end); with one, records are due at their global
// index divided by the rate, counted from the first Fetch.
func (g *generator) Fetch(ctx context.Context, b *abi.Batch, max int, wait time.Duration) error {
	if g.exhausted() {
		return io.EOF
	}
	limit := g.count // exclusive bound of the indexes to produce now; 0: no bound
	if g.rate > 0 {
		var err error
		if limit, err = g.due(ctx, wait); err != nil || limit <= g.next {
			return err
		}
	}
	for i := 0; i < max && (limit == 0 || g.next < limit); {
		n, at := g.next, g.at
		g.advance()
		if n < g.pos[at] {
			continue // produced before the positions were taken
		}
		g.pos[at] = n + g.splits
		ts := BaseTimestamp + n*tsStep
		if g.nexmark != nil {
			ts = g.nexmark.Timestamp(n)
		}
		g.rng = newRNG(g.seed, n)
		b.AppendValue(ts, func(dst []byte) []byte { return g.kind(g, dst, n, ts) })
		i++
	}
	if g.exhausted() {
		return io.EOF
	}
	return nil
}

// due waits, at most wait, until the subtask's next index is due and returns
// the exclusive bound of the global indexes due (capped at Count).
func (g *generator) due(ctx context.Context, wait time.Duration) (int64, error) {
	if g.start.IsZero() {
		g.start = time.Now().Add(-time.Duration(float64(g.origin) / float64(g.rate) * float64(time.Second)))
	}
	limit := g.dueBy(time.Since(g.start))
	if limit <= g.next && wait > 0 {
		at := time.Duration(float64(g.next) / float64(g.rate) * float64(time.Second))
		g.timer.Reset(min(at-time.Since(g.start), wait))
		select {
		case <-g.timer.C:
		case <-ctx.Done():
			g.timer.Stop()
			return 0, ctx.Err()
		}
		limit = g.dueBy(time.Since(g.start))
	}
	if g.count > 0 && limit > g.count {
		limit = g.count
	}
	return limit, nil
}

// dueBy is the exclusive bound of the global indexes due after elapsed.
func (g *generator) dueBy(elapsed time.Duration) int64 {
	return int64(elapsed.Seconds()*float64(g.rate)) + 1
}

// Close releases the generator.
func (g *generator) Close() error {
	g.timer.Stop()
	return nil
}
