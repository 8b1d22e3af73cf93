package exec

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/plan"
)

// Printed is one record a print sink wrote, as the job's sample shows it.
type Printed struct {
	Key       string `json:"key"`
	Value     string `json:"value"`
	Timestamp int64  `json:"timestamp"`
	Subtask   int    `json:"subtask"`
	// Written is when the sink wrote it.
	Written time.Time `json:"written"`
}

// PrintRing keeps the last records a print sink's subtask wrote. The task
// adds to it; the API reads it. It is safe for concurrent use.
type PrintRing struct {
	mu   sync.Mutex
	recs []Printed
	next int
	full bool
}

// NewPrintRing keeps the last n records (n > 0).
func NewPrintRing(n int) *PrintRing { return &PrintRing{recs: make([]Printed, n)} }

func (r *PrintRing) add(p Printed) {
	r.mu.Lock()
	r.recs[r.next] = p
	r.next++
	if r.next == len(r.recs) {
		r.next, r.full = 0, true
	}
	r.mu.Unlock()
}

// Last returns up to n of the last records, oldest first.
func (r *PrintRing) Last(n int) []Printed {
	r.mu.Lock()
	defer r.mu.Unlock()
	var all []Printed
	if r.full {
		all = append(append(all, r.recs[r.next:]...), r.recs[:r.next]...)
	} else {
		all = append(all, r.recs[:r.next]...)
	}
	if len(all) > n {
		all = all[len(all)-n:]
	}
	return all
}

// DefaultPrintKeep is what a print sink's subtask keeps when its spec says
// keep: 0.
const DefaultPrintKeep = 100

// printStage is a print sink's subtask: each record becomes an INFO line of
// the job's log and goes to the subtask's ring.
type printStage struct {
	log     *slog.Logger
	json    bool
	subtask int
	ring    *PrintRing
}

// printSink builds subtask i of the print sink v. Its ring lives in the
// vertex's counters, so that it outlives the run: a finished job's sample
// still shows what it printed.
func (b *builder) printSink(v *plan.Vertex, i int) *printStage {
	c := b.j.Counters[v.ID][i]
	ring := c.Printed.Load()
	if ring == nil {
		keep := v.Sink.Print.Keep
		if keep <= 0 {
			keep = DefaultPrintKeep
		}
		c.Printed.CompareAndSwap(nil, NewPrintRing(keep))
		ring = c.Printed.Load()
	}
	return &printStage{
		log:  b.j.Log.With("sink", v.ID, "subtask", i),
		json: v.Sink.Print.Format == "json", subtask: i, ring: ring,
	}
}

func (s *printStage) Process(ctx context.Context, recs []abi.Record) error {
	now := time.Now().UTC()
	enabled := s.log.Enabled(ctx, slog.LevelInfo)
	for i := range recs {
		p := Printed{Key: string(recs[i].Key), Value: string(recs[i].Value), Timestamp: recs[i].Timestamp, Subtask: s.subtask, Written: now}
		s.ring.add(p)
		if enabled {
			s.log.LogAttrs(ctx, slog.LevelInfo, s.line(p))
		}
	}
	return nil
}

// line is the log message of a record: "key value", or a JSON object.
func (s *printStage) line(p Printed) string {
	if !s.json {
		return p.Key + " " + p.Value
	}
	b, _ := json.Marshal(struct {
		Key       string `json:"key"`
		Value     string `json:"value"`
		Timestamp int64  `json:"timestamp"`
	}{p.Key, p.Value, p.Timestamp})
	return string(b)
}

func (s *printStage) Advance(context.Context, int64) error { return nil }
func (s *printStage) Tick(context.Context, int64) error    { return nil }
func (s *printStage) Finish(context.Context) error         { return nil }
func (s *printStage) Close(context.Context) error          { return nil }
