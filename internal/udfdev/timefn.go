package udfdev

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/host"
)

// session is a session window of one key being merged.
type session struct {
	key        string
	start, end int64
	records    int
}

// runSessionGap runs a session_gap function over recs in batches, each
// batch's groups being runs of records with the same key, and writes each
// record's gap; then the sessions the gaps make, per key in order of first
// appearance, by start. A record whose gap failed is in no session.
func runSessionGap(ctx context.Context, pool *host.Guest, fn int, recs []abi.Record, w *lineWriter, opt Options) error {
	var sessions []session
	var frame []byte
	for start := 0; start < len(recs); start += opt.BatchSize {
		batch := recs[start:min(start+opt.BatchSize, len(recs))]
		frame = abi.AppendFrameHead(frame[:0], abi.FrameHead{Watermark: abi.NoWatermark})
		groups := 0
		for i := 0; i < len(batch); {
			j := i + 1
			for j < len(batch) && string(batch[j].Key) == string(batch[i].Key) {
				j++
			}
			frame = abi.AppendGroupHead(frame, &abi.GroupHead{Key: batch[i].Key}, uint32(j-i))
			for k := i; k < j; k++ {
				frame = abi.AppendRecord(frame, &batch[k])
			}
			groups++
			i = j
		}
		abi.SetGroupCount(frame, uint32(groups))
		output, err := pool.Call(ctx, fn, frame)
		if err != nil {
			return err
		}
		err = eachEntry(output, len(batch), func(e *abi.Entry) error {
			input, r := start+int(e.Index), &batch[e.Index]
			switch {
			case e.Tag == abi.TagError:
				msg := string(e.Message)
				return w.write(outputLine{Input: &input, Error: &msg})
			case e.Tag != abi.TagTimestamp:
				return fmt.Errorf("a session_gap function wrote an entry with tag %d", e.Tag)
			case e.Timestamp <= 0:
				return fmt.Errorf("input %d: gap %d ms is not positive", input, e.Timestamp)
			}
			gap := e.Timestamp
			sessions = append(sessions, session{key: string(r.Key), start: r.Timestamp, end: r.Timestamp + gap, records: 1})
			return w.write(outputLine{Input: &input, Gap: &gap})
		})
		if err != nil {
			return fmt.Errorf("function %q: %w", opt.Function, err)
		}
	}
	for _, s := range mergeSessions(sessions) {
		line := outputLine{Window: &windowLine{Start: s.start, End: s.end}, Records: &s.records}
		line.Key, line.KeyBase64 = text([]byte(s.key))
		if err := w.write(line); err != nil {
			return err
		}
	}
	return nil
}

// mergeSessions merges the intersecting sessions of each key, touching
// included as in Flink: keys in order of first appearance, each key's
// sessions by start.
func mergeSessions(in []session) []session {
	var keys []string
	byKey := map[string][]session{}
	for _, s := range in {
		if _, ok := byKey[s.key]; !ok {
			keys = append(keys, s.key)
		}
		byKey[s.key] = append(byKey[s.key], s)
	}
	var out []session
	for _, k := range keys {
		ss := byKey[k]
		slices.SortStableFunc(ss, func(a, b session) int { return cmp.Compare(a.start, b.start) })
		cur := ss[0]
		for _, s := range ss[1:] {
			if s.start <= cur.end {
				cur.end = max(cur.end, s.end)
				cur.records += s.records
				continue
			}
			out = append(out, cur)
			cur = s
		}
		out = append(out, cur)
	}
	return out
}

// runWatermark runs a watermark function over recs in batches and writes
// the watermarks it emits after records, and its errors.
func runWatermark(ctx context.Context, pool *host.Guest, fn int, recs []abi.Record, w *lineWriter, opt Options) error {
	return callBatches(ctx, pool, fn, recs, opt.BatchSize, func(start int, batch []abi.Record, output []byte) error {
		err := eachEntry(output, len(batch), func(e *abi.Entry) error {
			input := start + int(e.Index)
			switch e.Tag {
			case abi.TagError:
				msg := string(e.Message)
				return w.write(outputLine{Input: &input, Error: &msg})
			case abi.TagWatermark:
				wm := e.Timestamp
				return w.write(outputLine{Input: &input, Watermark: &wm})
			}
			return fmt.Errorf("a watermark function wrote an entry with tag %d", e.Tag)
		})
		if err != nil {
			return fmt.Errorf("function %q: %w", opt.Function, err)
		}
		return nil
	})
}
