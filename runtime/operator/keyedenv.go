package operator

import (
	"errors"
	"fmt"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/host"
	"wasmstream.io/platform/state"
	"wasmstream.io/platform/watermark"
)

// KeyedEnv serves the state and timer imports of a keyed function's calls
// (process, on_timer, window_process): group g of the current frame is
// keys[g], with namespace spaces[g] (a window's bytes; empty for process
// functions). It belongs to the task goroutine.
type KeyedEnv struct {
	keyed  *state.Keyed
	timers *watermark.TimerService
	keys   [][]byte
	spaces [][]byte
	cur    int
}

var _ host.Env = (*KeyedEnv)(nil)

// NewKeyedEnv serves keyed's state and, when timers is not nil, timers
// registered in timers.
func NewKeyedEnv(keyed *state.Keyed, timers *watermark.TimerService) KeyedEnv {
	return KeyedEnv{keyed: keyed, timers: timers, cur: -1}
}

// Begin starts a frame's groups.
func (e *KeyedEnv) Begin() {
	e.keys, e.spaces = e.keys[:0], e.spaces[:0]
	e.cur = -1
}

// Add declares the frame's next group: its key and namespace, views that
// must stay valid until the call returns.
func (e *KeyedEnv) Add(key, namespace []byte) {
	e.keys = append(e.keys, key)
	e.spaces = append(e.spaces, namespace)
}

func (e *KeyedEnv) Enter(g uint32) error {
	if int(g) >= len(e.keys) {
		return fmt.Errorf("enter(%d): the frame has %d groups", g, len(e.keys))
	}
	e.cur = int(g)
	if err := e.keyed.SetKey(e.keys[g]); err != nil {
		return err
	}
	if len(e.spaces[g]) > 0 {
		e.keyed.SetNamespace(e.spaces[g])
	}
	return nil
}

func (e *KeyedEnv) ValueGet(s uint32) ([]byte, bool, error) { return e.keyed.Value(int(s)) }
func (e *KeyedEnv) ValueSet(s uint32, v []byte) error       { return e.keyed.SetValue(int(s), v) }
func (e *KeyedEnv) Clear(s uint32) error                    { return e.keyed.Clear(int(s)) }
func (e *KeyedEnv) ListAppend(s uint32, v []byte) error     { return e.keyed.Append(int(s), v) }
func (e *KeyedEnv) ListGet(s uint32) (int, []byte, error)   { return e.keyed.List(int(s)) }
func (e *KeyedEnv) MapPut(s uint32, k, v []byte) error      { return e.keyed.MapPut(int(s), k, v) }
func (e *KeyedEnv) MapRemove(s uint32, k []byte) error      { return e.keyed.MapRemove(int(s), k) }
func (e *KeyedEnv) MapEntries(s uint32) (int, []byte, error) {
	return e.keyed.MapEntries(int(s))
}
func (e *KeyedEnv) MapGet(s uint32, k []byte) ([]byte, bool, error) {
	return e.keyed.MapGet(int(s), k)
}

// errNoGroup is a timer call before any enter.
var errNoGroup = errors.New("no current key: call enter(group) first")

func (e *KeyedEnv) RegisterTimer(d abi.TimeDomain, ts int64) error {
	if e.cur < 0 {
		return errNoGroup
	}
	e.timers.Register(d, ts, e.keys[e.cur], e.spaces[e.cur])
	return nil
}

func (e *KeyedEnv) DeleteTimer(d abi.TimeDomain, ts int64) error {
	if e.cur < 0 {
		return errNoGroup
	}
	e.timers.Delete(d, ts, e.keys[e.cur], e.spaces[e.cur])
	return nil
}
