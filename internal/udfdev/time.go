package udfdev

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/operator"
)

// Step moves time explicitly between records of the input, as Flink's test
// harnesses do, or gives a record to the broadcast input: after the first
// Before records, either the watermark becomes Watermark (firing the
// event-time timers and windows due), or processing time becomes
// ProcessingTime (firing the processing-time timers due, and expiring state
// whose TTL has passed), or the process_broadcast function of a
// broadcast_process operator gets Broadcast.
type Step struct {
	Before         int
	Watermark      *int64
	ProcessingTime *int64
	Broadcast      *abi.Record
}

// timeLine is a step's input line: exactly one of its fields.
type timeLine struct {
	Watermark      *int64 `json:"watermark"`
	ProcessingTime *int64 `json:"processing_time"`
}

// ReadInput reads records as ReadRecords does, and between them lines that
// move time, {"watermark": ms} and {"processing_time": ms}, and lines that
// hold a record of the broadcast input, {"broadcast": {record}} (the
// record's fields as in ReadRecords). A watermark or a processing time that
// goes back is an error naming its line.
func ReadInput(r io.Reader) ([]abi.Record, []Step, error) {
	var recs []abi.Record
	var steps []Step
	var wm, now *int64
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 64<<20)
	for line := 1; sc.Scan(); line++ {
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		if st, ok, err := parseStep(text); ok || err != nil {
			if err != nil {
				return nil, nil, fmt.Errorf("input line %d: %w", line, err)
			}
			switch {
			case st.Watermark != nil && wm != nil && *st.Watermark < *wm:
				return nil, nil, fmt.Errorf("input line %d: watermark %d goes back from %d", line, *st.Watermark, *wm)
			case st.ProcessingTime != nil && now != nil && *st.ProcessingTime < *now:
				return nil, nil, fmt.Errorf("input line %d: processing_time %d goes back from %d", line, *st.ProcessingTime, *now)
			case st.Watermark != nil:
				wm = st.Watermark
			case st.ProcessingTime != nil:
				now = st.ProcessingTime
			}
			st.Before = len(recs)
			steps = append(steps, st)
			continue
		}
		rec, err := parseRecord(text)
		if err != nil {
			return nil, nil, fmt.Errorf("input line %d: %w", line, err)
		}
		recs = append(recs, rec)
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("read input: %w", err)
	}
	return recs, steps, nil
}

// parseStep decodes a line that moves time or holds a broadcast record; ok
// is false for any other line.
func parseStep(text []byte) (Step, bool, error) {
	var probe map[string]json.RawMessage
	if json.Unmarshal(text, &probe) != nil {
		return Step{}, false, nil
	}
	if b, isBroadcast := probe["broadcast"]; isBroadcast {
		if len(probe) != 1 {
			return Step{}, true, fmt.Errorf("a broadcast line has only the field broadcast")
		}
		rec, err := parseRecord(b)
		if err != nil {
			return Step{}, true, fmt.Errorf("broadcast: %w", err)
		}
		return Step{Broadcast: &rec}, true, nil
	}
	_, isWM := probe["watermark"]
	_, isPT := probe["processing_time"]
	if !isWM && !isPT {
		return Step{}, false, nil
	}
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.DisallowUnknownFields()
	var tl timeLine
	if err := dec.Decode(&tl); err != nil {
		return Step{}, true, fmt.Errorf("a line that moves time has only watermark or processing_time: %w", err)
	}
	if (tl.Watermark == nil) == (tl.ProcessingTime == nil) {
		return Step{}, true, fmt.Errorf("a line that moves time has watermark or processing_time, not both")
	}
	return Step{Watermark: tl.Watermark, ProcessingTime: tl.ProcessingTime}, true, nil
}

// checkSteps checks steps made without ReadInput: in input order, within
// the records, and each one thing.
func checkSteps(steps []Step, records int) error {
	last := 0
	for i, st := range steps {
		switch {
		case st.Before < last || st.Before > records:
			return fmt.Errorf("time step %d: before record %d, out of order or past the %d records", i, st.Before, records)
		case countSet(st.Watermark != nil, st.ProcessingTime != nil, st.Broadcast != nil) != 1:
			return fmt.Errorf("time step %d: set one of watermark, processing time and broadcast", i)
		}
		last = st.Before
	}
	return nil
}

// stepClock is the processing time of a run: the Options' clock until a
// step sets it.
type stepClock struct {
	set  bool
	now  int64
	base func() int64
}

func (c *stepClock) read() int64 {
	if c.set {
		return c.now
	}
	return c.base()
}

// feed gives records lo..hi-1 to stage in batches.
func (r *run) feed(ctx context.Context, stage operator.Stage, lo, hi int) error {
	for start := lo; start < hi; start += r.opt.BatchSize {
		r.first, r.batch = start, r.recs[start:min(start+r.opt.BatchSize, hi)]
		if err := stage.Process(ctx, r.batch); err != nil {
			return err
		}
		if err := r.endBatch(); err != nil {
			return err
		}
	}
	return nil
}

// countSet counts the true conditions.
func countSet(conds ...bool) int {
	n := 0
	for _, c := range conds {
		if c {
			n++
		}
	}
	return n
}

// step moves the watermark or the processing time, firing what falls due,
// or passes a record to the broadcast input.
func (r *run) step(ctx context.Context, stage operator.Stage, st Step) error {
	if st.Broadcast != nil {
		return r.broadcastRecord(ctx, stage, st.Broadcast)
	}
	r.batch, r.firing = nil, true
	defer func() { r.firing = false }()
	if st.Watermark != nil {
		return stage.Advance(ctx, *st.Watermark)
	}
	r.clock.set, r.clock.now = true, *st.ProcessingTime
	return stage.Tick(ctx, *st.ProcessingTime)
}
