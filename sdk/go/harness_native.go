//go:build !wasip1

package udf

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sort"

	"wasmstream.io/platform/abi"
)

// Harness runs keyed functions (Process, OnTimer, and window process
// functions with their per-window state) natively, without
// WebAssembly, against an in-memory stand-in for the platform's keyed state
// and timers, as Flink's operator test harnesses do: unit tests of a UDF
// feed it records and move its clocks, and check what it emits. The frames
// and dispatch are the same as inside WebAssembly.
//
// State follows the declared TTL (expiring TTL after the last write, never
// returned once expired) against the harness's processing time; the job
// spec's TTL overrides do not apply here. Only one Harness may run at a
// time, and it is not safe for concurrent use.
type Harness struct {
	onTimer string
	c       *caller
	wm      int64
	now     int64
	// groups are the keys of the call in progress and spaces their
	// namespaces (a window's, or none); cur is the group entered.
	groups [][]byte
	spaces [][]byte
	cur    int
	values map[string]fakeEntry
	lists  map[string][]fakeEntry
	maps   map[string]map[string]fakeEntry
	timers map[fakeTimer]bool
	// broadcasting is set during a ProcessBroadcast call (harness_broadcast.go).
	broadcasting bool
	// out is the scratch of buffer-filling calls.
	out []byte
}

type fakeEntry struct {
	v  []byte
	at int64
}

type fakeTimer struct {
	domain TimeDomain
	ts     int64
	key    string
}

// active is the harness whose call is in progress.
var active *Harness

// NewHarness makes a harness with empty state, no timers, processing time 0
// and no watermark. onTimer names the OnTimer function that handles fired
// timers ("" when the function under test registers none).
func NewHarness(onTimer string) *Harness {
	return &Harness{onTimer: onTimer, c: newCaller(&functions), wm: NoWatermark, cur: -1,
		values: map[string]fakeEntry{}, lists: map[string][]fakeEntry{}, maps: map[string]map[string]fakeEntry{}, timers: map[fakeTimer]bool{}}
}

// Watermark is the harness's watermark.
func (h *Harness) Watermark() int64 { return h.wm }

// ProcessingTime is the harness's processing time.
func (h *Harness) ProcessingTime() int64 { return h.now }

// Process calls the process function name once with recs, all of key, and
// returns its outputs resolved against recs (Output.Index is the position
// in recs).
func (h *Harness) Process(name string, key []byte, recs ...Record) ([]Output, error) {
	fn, err := h.function(name, abi.KindProcess)
	if err != nil {
		return nil, err
	}
	frame := abi.AppendFrameHead(nil, abi.FrameHead{Watermark: h.wm, ProcessingTime: h.now, Groups: 1})
	frame = abi.AppendGroupHead(frame, &abi.GroupHead{Key: key}, uint32(len(recs)))
	in := make([]Record, len(recs))
	for i := range recs {
		frame = abi.AppendRecord(frame, &recs[i])
		in[i] = recs[i]
		in[i].Key = key
	}
	return resolve(h.call(fn, frame, [][]byte{key}, nil), in)
}

// AdvanceWatermark moves the watermark to wm and fires the event-time
// timers due, through the OnTimer function, in timestamp and key order.
// Output.Index is a timer's position among those fired.
func (h *Harness) AdvanceWatermark(wm int64) ([]Output, error) {
	h.wm = max(h.wm, wm)
	return h.fire(EventTime, h.wm)
}

// SetProcessingTime moves processing time to ms and fires the
// processing-time timers due.
func (h *Harness) SetProcessingTime(ms int64) ([]Output, error) {
	h.now = max(h.now, ms)
	return h.fire(ProcessingTime, h.now)
}

// HarnessTimer is a registered timer.
type HarnessTimer struct {
	Key       []byte
	Timestamp int64
	Domain    TimeDomain
}

// Timers lists the registered timers in domain, timestamp and key order.
func (h *Harness) Timers() []HarnessTimer {
	out := []HarnessTimer{}
	for t := range h.timers {
		out = append(out, HarnessTimer{Key: []byte(t.key), Timestamp: t.ts, Domain: t.domain})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Domain != b.Domain {
			return a.Domain < b.Domain
		}
		if a.Timestamp != b.Timestamp {
			return a.Timestamp < b.Timestamp
		}
		return string(a.Key) < string(b.Key)
	})
	return out
}

// Value reads the value state name of key, as the platform holds it.
func (h *Harness) Value(name string, key []byte) ([]byte, bool) { return h.value(name, key, nil) }

func (h *Harness) value(name string, key, ns []byte) ([]byte, bool) {
	id := slices.IndexFunc(functions.states, func(d stateDecl) bool { return d.name == name })
	if id < 0 {
		return nil, false
	}
	e, ok := h.values[h.stateKey(uint32(id), key, ns)]
	if !ok || h.expired(uint32(id), e) {
		return nil, false
	}
	return slices.Clone(e.v), true
}

func (h *Harness) function(name string, kind abi.Kind) (uint32, error) {
	fn := functions.lookup(name)
	if fn < 0 {
		return 0, fmt.Errorf("udf: no function %q is registered", name)
	}
	if k := functions.funcs[fn].kind; k != kind {
		return 0, fmt.Errorf("udf: %q is a %s function, not %s", name, k, kind)
	}
	return uint32(fn), nil
}

// call runs a function over a grouped frame whose groups have keys, and
// namespaces when spaces is not nil.
func (h *Harness) call(fn uint32, frame []byte, keys, spaces [][]byte) []byte {
	if active != nil {
		panic("udf: a Harness call runs inside another")
	}
	active, h.groups, h.spaces, h.cur = h, keys, spaces, -1
	defer func() { active, h.groups, h.spaces, h.cur = nil, nil, nil, -1 }()
	return slices.Clone(h.c.call(fn, frame))
}

// fire runs the OnTimer function over the domain's timers due at upTo,
// again for timers it registers that are due too.
func (h *Harness) fire(domain TimeDomain, upTo int64) ([]Output, error) {
	var outs []Output
	fired := 0
	for {
		var due []fakeTimer
		for t := range h.timers {
			if t.domain == domain && t.ts <= upTo {
				due = append(due, t)
			}
		}
		if len(due) == 0 {
			return outs, nil
		}
		if h.onTimer == "" {
			return outs, fmt.Errorf("udf: %d timers fired and the harness has no on_timer function", len(due))
		}
		fn, err := h.function(h.onTimer, abi.KindOnTimer)
		if err != nil {
			return outs, err
		}
		sort.Slice(due, func(i, j int) bool {
			if due[i].ts != due[j].ts {
				return due[i].ts < due[j].ts
			}
			return due[i].key < due[j].key
		})
		frame := abi.AppendFrameHead(nil, abi.FrameHead{Watermark: h.wm, ProcessingTime: h.now, Groups: uint32(len(due))})
		keys := make([][]byte, len(due))
		in := make([]Record, len(due))
		for i, t := range due {
			delete(h.timers, t)
			keys[i] = []byte(t.key)
			in[i] = Record{Key: keys[i], Timestamp: t.ts}
			g := abi.GroupHead{Flags: abi.GroupTimer, Key: keys[i], TimerTime: t.ts, TimerDomain: domain}
			frame = abi.AppendGroupHead(frame, &g, 0)
		}
		got, err := resolve(h.call(fn, frame, keys, nil), in)
		if err != nil {
			return outs, err
		}
		for _, o := range got {
			o.Index += fired
			outs = append(outs, o)
		}
		fired += len(due)
	}
}

// The stand-in for the platform's imports, used while a Harness call runs.

func harness() *Harness {
	if active == nil {
		panic("udf: keyed functions run natively only inside a Harness call")
	}
	return active
}

func (h *Harness) key() []byte {
	if h.cur < 0 {
		panic("udf: state used before entering a group")
	}
	return h.groups[h.cur]
}

// stateKey is where state id of key in namespace ns is kept.
func (h *Harness) stateKey(id uint32, key, ns []byte) string {
	b := binary.BigEndian.AppendUint32(nil, id)
	b = binary.BigEndian.AppendUint32(b, uint32(len(key)))
	return string(append(append(b, key...), ns...))
}

// namespace is the current group's namespace.
func (h *Harness) namespace() []byte {
	if h.spaces == nil {
		return nil
	}
	return h.spaces[h.cur]
}

func (h *Harness) current(id uint32, kind string) string {
	if int(id) >= len(functions.states) || functions.states[id].kind != kind {
		panic(fmt.Sprintf("udf: state %d is not a declared %s state", id, kind))
	}
	if k, ok := h.broadcastKey(id); ok {
		return k
	}
	return h.stateKey(id, h.key(), h.namespace())
}

func (h *Harness) expired(id uint32, e fakeEntry) bool {
	ttl := functions.states[id].ttlMillis
	return ttl > 0 && h.now >= e.at+ttl
}

// deliver copies data into buf if it fits and returns its length.
func deliver(buf, data []byte) int32 {
	if len(data) <= len(buf) {
		copy(buf, data)
	}
	return int32(len(data))
}

func hostEnter(group uint32) {
	h := harness()
	if int(group) >= len(h.groups) {
		panic(fmt.Sprintf("udf: enter(%d) with %d groups", group, len(h.groups)))
	}
	h.cur = int(group)
}

func hostValueGet(state uint32, buf []byte) int32 {
	h := harness()
	e, ok := h.values[h.current(state, abi.StateValue)]
	if !ok || h.expired(state, e) {
		return -1
	}
	return deliver(buf, e.v)
}

func hostValueSet(state uint32, v []byte) {
	h := harness()
	h.values[h.current(state, abi.StateValue)] = fakeEntry{v: slices.Clone(v), at: h.now}
}

func hostStateClear(state uint32) {
	h := harness()
	if int(state) >= len(functions.states) {
		panic(fmt.Sprintf("udf: state %d is not declared", state))
	}
	h.writable(state)
	k, ok := h.broadcastKey(state)
	if !ok {
		k = h.stateKey(state, h.key(), h.namespace())
	}
	delete(h.values, k)
	delete(h.lists, k)
	delete(h.maps, k)
}

func hostListAppend(state uint32, v []byte) {
	h := harness()
	k := h.current(state, abi.StateList)
	h.lists[k] = append(h.lists[k], fakeEntry{v: slices.Clone(v), at: h.now})
}

func hostListGet(state uint32, buf []byte) int32 {
	h := harness()
	h.out = binary.LittleEndian.AppendUint32(h.out[:0], 0)
	n := uint32(0)
	for _, e := range h.lists[h.current(state, abi.StateList)] {
		if !h.expired(state, e) {
			h.out = binary.LittleEndian.AppendUint32(h.out, uint32(len(e.v)))
			h.out = append(h.out, e.v...)
			n++
		}
	}
	binary.LittleEndian.PutUint32(h.out, n)
	return deliver(buf, h.out)
}

func hostMapGet(state uint32, k, buf []byte) int32 {
	h := harness()
	e, ok := h.maps[h.current(state, abi.StateMap)][string(k)]
	if !ok || h.expired(state, e) {
		return -1
	}
	return deliver(buf, e.v)
}

func hostMapPut(state uint32, k, v []byte) {
	h := harness()
	h.writable(state)
	sk := h.current(state, abi.StateMap)
	if h.maps[sk] == nil {
		h.maps[sk] = map[string]fakeEntry{}
	}
	h.maps[sk][string(k)] = fakeEntry{v: slices.Clone(v), at: h.now}
}

func hostMapRemove(state uint32, k []byte) {
	h := harness()
	h.writable(state)
	delete(h.maps[h.current(state, abi.StateMap)], string(k))
}

func hostMapEntries(state uint32, buf []byte) int32 {
	h := harness()
	m := h.maps[h.current(state, abi.StateMap)]
	keys := make([]string, 0, len(m))
	for k, e := range m {
		if !h.expired(state, e) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	h.out = binary.LittleEndian.AppendUint32(h.out[:0], uint32(len(keys)))
	for _, k := range keys {
		h.out = binary.LittleEndian.AppendUint32(h.out, uint32(len(k)))
		h.out = append(h.out, k...)
		h.out = binary.LittleEndian.AppendUint32(h.out, uint32(len(m[k].v)))
		h.out = append(h.out, m[k].v...)
	}
	return deliver(buf, h.out)
}

func hostTimerRegister(domain uint32, ts int64) {
	h := harness()
	h.noWindowTimers()
	h.noBroadcastTimers()
	h.timers[fakeTimer{domain: TimeDomain(domain), ts: ts, key: string(h.key())}] = true
}

func hostTimerDelete(domain uint32, ts int64) {
	h := harness()
	h.noWindowTimers()
	h.noBroadcastTimers()
	delete(h.timers, fakeTimer{domain: TimeDomain(domain), ts: ts, key: string(h.key())})
}
