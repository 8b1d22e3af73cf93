package udfdev

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/operator/process"
	"wasmstream.io/platform/state"
)

// windowLine is the window an output answers.
type windowLine struct {
	Start int64 `json:"start"`
	End   int64 `json:"end"`
}

// stateLine is one entry of the state after a run: a value, a list, or one
// entry of a map.
type stateLine struct {
	State     string      `json:"state"`
	Key       *string     `json:"key,omitempty"`
	KeyBase64 []byte      `json:"key_base64,omitempty"`
	Window    *windowLine `json:"window,omitempty"`
	MapKey    *string     `json:"map_key,omitempty"`
	Value     *string     `json:"value,omitempty"`
	ValueB64  []byte      `json:"value_base64,omitempty"`
	Values    []string    `json:"values,omitempty"`
}

// timerLine is a timer still registered after a run.
type timerLine struct {
	Timer     string  `json:"timer"`
	Key       *string `json:"key,omitempty"`
	KeyBase64 []byte  `json:"key_base64,omitempty"`
	Timestamp int64   `json:"timestamp"`
}

// stateEntry is the state lines of one state of one key (and window).
type stateEntry struct {
	state      int
	key        []byte
	start, end int64
	lines      []stateLine
}

// readState reads every state of keyed's current key (and namespace) into
// entries: what a value, list or map state holds, as lines.
func (r *run) readState(keyed *state.Keyed, key []byte, win *windowLine) ([]stateEntry, error) {
	var entries []stateEntry
	for id, st := range r.states {
		line := stateLine{State: st.Name, Window: win}
		line.Key, line.KeyBase64 = text(key)
		e := stateEntry{state: id, key: bytes.Clone(key)}
		if win != nil {
			e.start, e.end = win.Start, win.End
		}
		switch st.Kind {
		case abi.StateValue:
			v, ok, err := keyed.Value(id)
			if err != nil {
				return nil, err
			}
			if ok {
				line.Value, line.ValueB64 = text(v)
				e.lines = append(e.lines, line)
			}
		case abi.StateList:
			n, elems, err := keyed.List(id)
			if err != nil {
				return nil, err
			}
			for range n {
				var v []byte
				if v, elems, err = cutLen(elems); err != nil {
					return nil, err
				}
				line.Values = append(line.Values, string(v))
			}
			if n > 0 {
				e.lines = append(e.lines, line)
			}
		case abi.StateMap:
			n, entries, err := keyed.MapEntries(id)
			if err != nil {
				return nil, err
			}
			for range n {
				var k, v []byte
				if k, entries, err = cutLen(entries); err != nil {
					return nil, err
				}
				if v, entries, err = cutLen(entries); err != nil {
					return nil, err
				}
				entry, mk := line, string(k)
				entry.MapKey = &mk
				entry.Value, entry.ValueB64 = text(v)
				e.lines = append(e.lines, entry)
			}
		}
		if len(e.lines) > 0 {
			entries = append(entries, e)
		}
	}
	return entries, nil
}

// cutLen splits a little-endian u32 length and its bytes off b.
func cutLen(b []byte) (head, rest []byte, err error) {
	if len(b) < 4 || uint64(binary.LittleEndian.Uint32(b)) > uint64(len(b)-4) {
		return nil, nil, fmt.Errorf("malformed state entries")
	}
	n := binary.LittleEndian.Uint32(b)
	return b[4 : 4+n], b[4+n:], nil
}

// readWindowState keeps the state of key's window [start, end), which the
// window operator is about to clear.
func (r *run) readWindowState(keyed *state.Keyed, key []byte, start, end int64) error {
	entries, err := r.readState(keyed, key, &windowLine{Start: start, End: end})
	r.windowState = append(r.windowState, entries...)
	return err
}

// writeWindowState writes the window state read, by state, key and
// window.
func (r *run) writeWindowState() error {
	slices.SortStableFunc(r.windowState, func(a, b stateEntry) int {
		return cmp.Or(cmp.Compare(a.state, b.state), bytes.Compare(a.key, b.key), cmp.Compare(a.start, b.start), cmp.Compare(a.end, b.end))
	})
	return r.writeEntries(r.windowState)
}

func (r *run) writeEntries(entries []stateEntry) error {
	for _, e := range entries {
		for _, l := range e.lines {
			if err := r.w.enc.Encode(l); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeProcessState writes a process operator's state, by state, key and
// map key, then its timers, by key, domain and time. The state's keys are
// the input's.
func (r *run) writeProcessState(keyed *state.Keyed, op *process.Operator) error {
	var keys [][]byte
	for i := range r.recs {
		keys = append(keys, r.recs[i].Key)
	}
	slices.SortFunc(keys, bytes.Compare)
	keys = slices.CompactFunc(keys, bytes.Equal)
	var entries []stateEntry
	for _, key := range keys {
		if err := keyed.SetKey(key); err != nil {
			return err
		}
		e, err := r.readState(keyed, key, nil)
		if err != nil {
			return err
		}
		entries = append(entries, e...)
	}
	slices.SortStableFunc(entries, func(a, b stateEntry) int { return cmp.Compare(a.state, b.state) })
	if err := r.writeEntries(entries); err != nil {
		return err
	}
	type timer struct {
		domain abi.TimeDomain
		key    []byte
		ts     int64
	}
	var timers []timer
	for _, d := range []abi.TimeDomain{abi.EventTime, abi.ProcessingTime} {
		for _, t := range op.Timers(d) {
			timers = append(timers, timer{d, t.Key, t.Timestamp})
		}
	}
	slices.SortFunc(timers, func(a, b timer) int {
		return cmp.Or(bytes.Compare(a.key, b.key), cmp.Compare(a.domain, b.domain), cmp.Compare(a.ts, b.ts))
	})
	for _, t := range timers {
		line := timerLine{Timer: "event", Timestamp: t.ts}
		if t.domain == abi.ProcessingTime {
			line.Timer = "processing"
		}
		line.Key, line.KeyBase64 = text(t.key)
		if err := r.w.enc.Encode(line); err != nil {
			return err
		}
	}
	return nil
}
