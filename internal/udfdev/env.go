package udfdev

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"

	"wasmstream.io/platform/abi"
)

// memEnv is the keyed state and timers of a local run (host.Env), in
// memory: what the platform's state backend holds for a process or
// window_process function, without TTL, checkpoints or key groups.
type memEnv struct {
	states []abi.State
	// keys are the group keys of the frame being called; cur is the
	// entered one.
	keys [][]byte
	cur  []byte
	// windows, for a window_process function, are the groups' windows
	// (which scope its state, and which have no timers); win is the
	// entered one.
	windows []windowLine
	win     windowLine
	values  map[stateKey][]byte
	lists   map[stateKey][][]byte
	maps    map[stateKey]map[string][]byte
	timers  map[timer]bool
	buf     []byte
}

type stateKey struct {
	state  uint32
	key    string
	window windowLine
}

type timer struct {
	key    string
	domain abi.TimeDomain
	ts     int64
}

func newMemEnv(states []abi.State) *memEnv {
	return &memEnv{
		states: states,
		values: map[stateKey][]byte{},
		lists:  map[stateKey][][]byte{},
		maps:   map[stateKey]map[string][]byte{},
		timers: map[timer]bool{},
	}
}

// at checks that state is declared with kind and names it for the current
// key.
func (e *memEnv) at(state uint32, kind string) (stateKey, error) {
	if e.cur == nil {
		return stateKey{}, fmt.Errorf("state used before enter")
	}
	if int(state) >= len(e.states) {
		return stateKey{}, fmt.Errorf("state %d: the module declares %d", state, len(e.states))
	}
	if e.states[state].Kind != kind {
		return stateKey{}, fmt.Errorf("state %q is a %s state, used as a %s state", e.states[state].Name, e.states[state].Kind, kind)
	}
	return stateKey{state, string(e.cur), e.win}, nil
}

func (e *memEnv) Enter(group uint32) error {
	if int(group) >= len(e.keys) {
		return fmt.Errorf("enter group %d of %d", group, len(e.keys))
	}
	e.cur = e.keys[group]
	if e.windows != nil {
		e.win = e.windows[group]
	}
	return nil
}

func (e *memEnv) ValueGet(state uint32) ([]byte, bool, error) {
	k, err := e.at(state, abi.StateValue)
	v, ok := e.values[k]
	return v, ok, err
}

func (e *memEnv) ValueSet(state uint32, value []byte) error {
	k, err := e.at(state, abi.StateValue)
	if err == nil {
		e.values[k] = append([]byte(nil), value...)
	}
	return err
}

func (e *memEnv) Clear(state uint32) error {
	if int(state) >= len(e.states) {
		return fmt.Errorf("state %d: the module declares %d", state, len(e.states))
	}
	k, err := e.at(state, e.states[state].Kind)
	delete(e.values, k)
	delete(e.lists, k)
	delete(e.maps, k)
	return err
}

func (e *memEnv) ListAppend(state uint32, value []byte) error {
	k, err := e.at(state, abi.StateList)
	if err == nil {
		e.lists[k] = append(e.lists[k], append([]byte(nil), value...))
	}
	return err
}

func (e *memEnv) ListGet(state uint32) (int, []byte, error) {
	k, err := e.at(state, abi.StateList)
	e.buf = e.buf[:0]
	for _, v := range e.lists[k] {
		e.buf = binary.LittleEndian.AppendUint32(e.buf, uint32(len(v)))
		e.buf = append(e.buf, v...)
	}
	return len(e.lists[k]), e.buf, err
}

func (e *memEnv) MapGet(state uint32, key []byte) ([]byte, bool, error) {
	k, err := e.at(state, abi.StateMap)
	v, ok := e.maps[k][string(key)]
	return v, ok, err
}

func (e *memEnv) MapPut(state uint32, key, value []byte) error {
	k, err := e.at(state, abi.StateMap)
	if err != nil {
		return err
	}
	if e.maps[k] == nil {
		e.maps[k] = map[string][]byte{}
	}
	e.maps[k][string(key)] = append([]byte(nil), value...)
	return nil
}

func (e *memEnv) MapRemove(state uint32, key []byte) error {
	k, err := e.at(state, abi.StateMap)
	delete(e.maps[k], string(key))
	return err
}

func (e *memEnv) MapEntries(state uint32) (int, []byte, error) {
	k, err := e.at(state, abi.StateMap)
	e.buf = e.buf[:0]
	for _, mk := range sortedKeys(e.maps[k]) {
		e.buf = binary.LittleEndian.AppendUint32(e.buf, uint32(len(mk)))
		e.buf = append(e.buf, mk...)
		e.buf = binary.LittleEndian.AppendUint32(e.buf, uint32(len(e.maps[k][mk])))
		e.buf = append(e.buf, e.maps[k][mk]...)
	}
	return len(e.maps[k]), e.buf, err
}

// errWindowTimers refuses a window_process function's timer calls, as the
// platform does.
var errWindowTimers = errors.New("window_process functions have no timers")

func (e *memEnv) RegisterTimer(domain abi.TimeDomain, ts int64) error {
	if e.windows != nil {
		return errWindowTimers
	}
	if e.cur == nil {
		return fmt.Errorf("timer registered before enter")
	}
	e.timers[timer{string(e.cur), domain, ts}] = true
	return nil
}

func (e *memEnv) DeleteTimer(domain abi.TimeDomain, ts int64) error {
	if e.windows != nil {
		return errWindowTimers
	}
	if e.cur == nil {
		return fmt.Errorf("timer deleted before enter")
	}
	delete(e.timers, timer{string(e.cur), domain, ts})
	return nil
}

// eventTimers are the event-time timers at the earliest registered time,
// by key.
func (e *memEnv) eventTimers() []timer {
	var due []timer
	for t := range e.timers {
		switch {
		case t.domain != abi.EventTime:
		case len(due) == 0 || t.ts < due[0].ts:
			due = append(due[:0], t)
		case t.ts == due[0].ts:
			due = append(due, t)
		}
	}
	sort.Slice(due, func(i, j int) bool { return due[i].key < due[j].key })
	return due
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// sortedStateKeys orders state keys by key, then window.
func sortedStateKeys(m map[stateKey]bool) []stateKey {
	keys := make([]stateKey, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.key != b.key {
			return a.key < b.key
		}
		if a.window.Start != b.window.Start {
			return a.window.Start < b.window.Start
		}
		return a.window.End < b.window.End
	})
	return keys
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

// write prints the state, by state, key and map key, then the timers, by
// key, domain and time.
func (e *memEnv) write(w *lineWriter) error {
	var lines []any
	for i, st := range e.states {
		state := uint32(i)
		keys := map[stateKey]bool{}
		for k := range e.values {
			if k.state == state {
				keys[k] = true
			}
		}
		for k := range e.lists {
			if k.state == state {
				keys[k] = true
			}
		}
		for k := range e.maps {
			if k.state == state {
				keys[k] = true
			}
		}
		for _, sk := range sortedStateKeys(keys) {
			key := sk.key
			line := stateLine{State: st.Name}
			line.Key, line.KeyBase64 = text([]byte(key))
			if e.windows != nil {
				line.Window = &windowLine{Start: sk.window.Start, End: sk.window.End}
			}
			switch st.Kind {
			case abi.StateValue:
				line.Value, line.ValueB64 = text(e.values[sk])
				lines = append(lines, line)
			case abi.StateList:
				for _, v := range e.lists[sk] {
					line.Values = append(line.Values, string(v))
				}
				lines = append(lines, line)
			case abi.StateMap:
				for _, mk := range sortedKeys(e.maps[sk]) {
					entry := line
					entry.MapKey = &mk
					entry.Value, entry.ValueB64 = text(e.maps[sk][mk])
					lines = append(lines, entry)
				}
			}
		}
	}
	timers := make([]timer, 0, len(e.timers))
	for t := range e.timers {
		timers = append(timers, t)
	}
	sort.Slice(timers, func(i, j int) bool {
		a, b := timers[i], timers[j]
		if a.key != b.key {
			return a.key < b.key
		}
		if a.domain != b.domain {
			return a.domain < b.domain
		}
		return a.ts < b.ts
	})
	for _, t := range timers {
		line := timerLine{Timer: "event", Timestamp: t.ts}
		if t.domain == abi.ProcessingTime {
			line.Timer = "processing"
		}
		line.Key, line.KeyBase64 = text([]byte(t.key))
		lines = append(lines, line)
	}
	for _, l := range lines {
		if err := w.enc.Encode(l); err != nil {
			return err
		}
	}
	return nil
}
