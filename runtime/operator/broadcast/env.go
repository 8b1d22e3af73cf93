package broadcast

import (
	"context"
	"errors"
	"fmt"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/host"
	"wasmstream.io/platform/runtime/operator"
)

// ErrReadOnly is the error of a keyed-side call that writes a broadcast
// state; ErrNoKey that of a broadcast-side call that uses keyed state or
// timers.
var (
	ErrReadOnly = errors.New("is read-only in process and on_timer functions; only process_broadcast writes it")
	ErrNoKey    = errors.New("process_broadcast has no current key")
)

// broadcastEnv serves the state imports of process_broadcast calls: the
// broadcast states, read and written. Their one group has no key, so keyed
// state and timers are errors, as in Flink's processBroadcastElement.
type broadcastEnv struct{ store *Store }

var _ host.Env = (*broadcastEnv)(nil)

func (e *broadcastEnv) noKey(what string, s uint32) error {
	return fmt.Errorf("%s on keyed state %q: %w (read it from the keyed input's process function)", what, e.store.Name(s), ErrNoKey)
}

func (e *broadcastEnv) Enter(g uint32) error {
	if g != 0 {
		return fmt.Errorf("enter(%d): a process_broadcast frame has one group", g)
	}
	return nil
}

func (e *broadcastEnv) ValueGet(s uint32) ([]byte, bool, error) {
	return nil, false, e.noKey("value_get", s)
}
func (e *broadcastEnv) ValueSet(s uint32, _ []byte) error     { return e.noKey("value_set", s) }
func (e *broadcastEnv) ListAppend(s uint32, _ []byte) error   { return e.noKey("list_append", s) }
func (e *broadcastEnv) ListGet(s uint32) (int, []byte, error) { return 0, nil, e.noKey("list_get", s) }

func (e *broadcastEnv) Clear(s uint32) error {
	if !e.store.Has(s) {
		return e.noKey("state_clear", s)
	}
	e.store.Clear(s)
	return nil
}

func (e *broadcastEnv) MapGet(s uint32, k []byte) ([]byte, bool, error) {
	if !e.store.Has(s) {
		return nil, false, e.noKey("map_get", s)
	}
	v, ok := e.store.Get(s, k)
	return v, ok, nil
}

func (e *broadcastEnv) MapPut(s uint32, k, v []byte) error {
	if !e.store.Has(s) {
		return e.noKey("map_put", s)
	}
	return e.store.Put(s, k, v)
}

func (e *broadcastEnv) MapRemove(s uint32, k []byte) error {
	if !e.store.Has(s) {
		return e.noKey("map_remove", s)
	}
	e.store.Remove(s, k)
	return nil
}

func (e *broadcastEnv) MapEntries(s uint32) (int, []byte, error) {
	if !e.store.Has(s) {
		return 0, nil, e.noKey("map_entries", s)
	}
	n, enc := e.store.Entries(s)
	return n, enc, nil
}

func (e *broadcastEnv) RegisterTimer(abi.TimeDomain, int64) error {
	return fmt.Errorf("timer_register: %w; register timers in the keyed input's process function", ErrNoKey)
}

func (e *broadcastEnv) DeleteTimer(abi.TimeDomain, int64) error {
	return fmt.Errorf("timer_delete: %w", ErrNoKey)
}

// keyedView serves the keyed side's state imports: broadcast states read
// only, everything else by the keyed process operator's own env.
type keyedView struct {
	keyed host.Env
	store *Store
}

var _ host.Env = (*keyedView)(nil)

func (v *keyedView) readOnly(what string, s uint32) error {
	return fmt.Errorf("%s: broadcast state %q %w", what, v.store.Name(s), ErrReadOnly)
}

func (v *keyedView) Enter(g uint32) error                    { return v.keyed.Enter(g) }
func (v *keyedView) ValueGet(s uint32) ([]byte, bool, error) { return v.keyed.ValueGet(s) }
func (v *keyedView) ValueSet(s uint32, b []byte) error       { return v.keyed.ValueSet(s, b) }
func (v *keyedView) ListAppend(s uint32, b []byte) error     { return v.keyed.ListAppend(s, b) }
func (v *keyedView) ListGet(s uint32) (int, []byte, error)   { return v.keyed.ListGet(s) }
func (v *keyedView) RegisterTimer(d abi.TimeDomain, ts int64) error {
	return v.keyed.RegisterTimer(d, ts)
}
func (v *keyedView) DeleteTimer(d abi.TimeDomain, ts int64) error { return v.keyed.DeleteTimer(d, ts) }

func (v *keyedView) Clear(s uint32) error {
	if v.store.Has(s) {
		return v.readOnly("state_clear", s)
	}
	return v.keyed.Clear(s)
}

func (v *keyedView) MapGet(s uint32, k []byte) ([]byte, bool, error) {
	if v.store.Has(s) {
		b, ok := v.store.Get(s, k)
		return b, ok, nil
	}
	return v.keyed.MapGet(s, k)
}

func (v *keyedView) MapPut(s uint32, k, b []byte) error {
	if v.store.Has(s) {
		return v.readOnly("map_put", s)
	}
	return v.keyed.MapPut(s, k, b)
}

func (v *keyedView) MapRemove(s uint32, k []byte) error {
	if v.store.Has(s) {
		return v.readOnly("map_remove", s)
	}
	return v.keyed.MapRemove(s, k)
}

func (v *keyedView) MapEntries(s uint32) (int, []byte, error) {
	if v.store.Has(s) {
		n, enc := v.store.Entries(s)
		return n, enc, nil
	}
	return v.keyed.MapEntries(s)
}

// ReadOnly is g with its calls' state imports seen through the broadcast
// states: reads of a broadcast state served from s, writes refused, the
// other states as g's env serves them. The keyed side's process and
// on_timer calls are made with it.
func (s *Store) ReadOnly(g operator.GroupCall) operator.GroupCall {
	g.Guest = &viewCaller{inner: g.Guest, view: keyedView{store: s}}
	return g
}

// viewCaller runs the keyed side's functions with the keyed process
// operator's env seen through a keyedView.
type viewCaller struct {
	inner operator.Caller
	view  keyedView
}

func (c *viewCaller) Call(ctx context.Context, fn int, frame []byte) ([]byte, error) {
	return c.inner.Call(ctx, fn, frame)
}

func (c *viewCaller) CallWith(ctx context.Context, fn int, frame []byte, env host.Env) ([]byte, error) {
	c.view.keyed = env
	return operator.CallKeyed(ctx, c.inner, fn, frame, &c.view)
}

func (c *viewCaller) Close(ctx context.Context) error { return c.inner.Close(ctx) }
