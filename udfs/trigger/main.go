// Command trigger is a UDF module of custom window triggers (kind
// trigger), Flink's Trigger written as a function. Its README says more;
// build it with make.
//
//   - early fires a window at once when a record with "urgent": true
//     arrives, and again when the watermark passes the window's end.
//   - pairs fires and purges a window every second record, and fires it
//     (accumulating) 10 ms of processing time after the first record of a
//     pair when no second one came; its state is the pair's count and that
//     timer, which sessions merge by adding the counts.
package main

import (
	"encoding/binary"
	"fmt"

	udf "wasmstream.io/platform/sdk/go"
	"wasmstream.io/platform/sdk/go/json"
)

func init() {
	udf.Trigger("early", udf.TriggerFuncs{
		OnElement:   earlyElement,
		OnEventTime: earlyTime,
		OnMerge: func(t *udf.TriggerContext, _ []byte, _ bool) error {
			t.RegisterEventTimeTimer(t.Window().End - 1)
			return nil
		},
		Clear: func(t *udf.TriggerContext) error {
			t.DeleteEventTimeTimer(t.Window().End - 1)
			return nil
		},
	})
	udf.Trigger("pairs", udf.TriggerFuncs{
		OnElement: pairsElement,
		OnProcessingTime: func(t *udf.TriggerContext, _ int64) (udf.TriggerResult, error) {
			p, err := pairOf(t)
			if err != nil {
				return udf.Continue, err
			}
			p.timer = 0
			t.SetState(p.append())
			return udf.Fire, nil
		},
		OnMerge: pairsMerge,
		Clear: func(t *udf.TriggerContext) error {
			p, err := pairOf(t)
			if err == nil && p.timer != 0 {
				t.DeleteProcessingTimeTimer(p.timer)
			}
			return err
		},
	})
}

// earlyElement fires at once for an urgent record, or for a record that
// comes after the watermark passed the window's end (late within the
// allowed lateness), and otherwise waits for the window's end.
func earlyElement(t *udf.TriggerContext, r udf.Record) (udf.TriggerResult, error) {
	last := t.Window().End - 1
	if last <= t.Watermark() {
		return udf.Fire, nil
	}
	t.RegisterEventTimeTimer(last)
	if urgent, ok := json.GetBool(r.Value, "urgent"); ok && urgent {
		return udf.Fire, nil
	}
	return udf.Continue, nil
}

// earlyTime fires at the window's end; the cleanup timer after the allowed
// lateness does not fire.
func earlyTime(t *udf.TriggerContext, time int64) (udf.TriggerResult, error) {
	if time == t.Window().End-1 {
		return udf.Fire, nil
	}
	return udf.Continue, nil
}

// pair is the state of pairs: the records of the pair so far and the
// processing-time timer it set (0: none), 16 bytes little-endian.
type pair struct {
	count uint64
	timer int64
}

func (p pair) append() []byte {
	b := binary.LittleEndian.AppendUint64(nil, p.count)
	return binary.LittleEndian.AppendUint64(b, uint64(p.timer))
}

func decodePair(b []byte, ok bool) (pair, error) {
	if !ok {
		return pair{}, nil
	}
	if len(b) != 16 {
		return pair{}, fmt.Errorf("pairs state of %d bytes, want 16", len(b))
	}
	return pair{count: binary.LittleEndian.Uint64(b), timer: int64(binary.LittleEndian.Uint64(b[8:]))}, nil
}

func pairOf(t *udf.TriggerContext) (pair, error) { return decodePair(t.State()) }

func pairsElement(t *udf.TriggerContext, _ udf.Record) (udf.TriggerResult, error) {
	p, err := pairOf(t)
	if err != nil {
		return udf.Continue, err
	}
	p.count++
	if p.count >= 2 {
		if p.timer != 0 {
			t.DeleteProcessingTimeTimer(p.timer)
		}
		t.SetState(nil)
		return udf.FireAndPurge, nil
	}
	if p.timer == 0 {
		p.timer = t.ProcessingTime() + 10
		t.RegisterProcessingTimeTimer(p.timer)
	}
	t.SetState(p.append())
	return udf.Continue, nil
}

// pairsMerge adds the merged session's count and keeps the earliest timer,
// registered again in the merged window.
func pairsMerge(t *udf.TriggerContext, other []byte, ok bool) error {
	p, err := pairOf(t)
	if err != nil {
		return err
	}
	o, err := decodePair(other, ok)
	if err != nil {
		return err
	}
	p.count += o.count
	if p.timer == 0 || (o.timer != 0 && o.timer < p.timer) {
		p.timer = o.timer
	}
	if p.timer != 0 {
		t.RegisterProcessingTimeTimer(p.timer)
	}
	if p.count == 0 {
		return nil
	}
	t.SetState(p.append())
	return nil
}

func main() {}
