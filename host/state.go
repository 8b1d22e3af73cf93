package host

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"wasmstream.io/platform/abi"
)

// Env is what the state and timer imports act on during one call: the keyed
// state and timers of the operator that makes the call, for the group the
// guest entered last. The runtime implements it and passes it to
// Guest.CallWith; its methods run on the caller's goroutine, inside the call.
// States are named by their index in the module's Description.States.
//
// Byte slices passed to Env are views of guest memory, valid only during the
// method; slices it returns must stay valid until its next method call. An
// error traps the guest's call; the *CallError returned by CallWith wraps it.
type Env interface {
	Enter(group uint32) error
	ValueGet(state uint32) (value []byte, ok bool, err error)
	ValueSet(state uint32, value []byte) error
	Clear(state uint32) error
	ListAppend(state uint32, value []byte) error
	// ListGet returns the element count and the elements encoded as
	// (u32 length | bytes)*, little-endian.
	ListGet(state uint32) (count int, elems []byte, err error)
	MapGet(state uint32, key []byte) (value []byte, ok bool, err error)
	MapPut(state uint32, key, value []byte) error
	MapRemove(state uint32, key []byte) error
	// MapEntries returns the entry count and the entries in key order,
	// encoded as (u32 key length | key | u32 value length | value)*.
	MapEntries(state uint32) (count int, entries []byte, err error)
	RegisterTimer(domain abi.TimeDomain, timestamp int64) error
	DeleteTimer(domain abi.TimeDomain, timestamp int64) error
}

// errNoEnv is the trap of a state or timer import called outside a keyed
// function (a map, say), where nothing provides state.
var errNoEnv = errors.New("state and timer imports are only available to keyed functions (process, on_timer, window_process)")

// retry keeps a result that did not fit the guest's buffer, so that the
// guest's immediate retry with a larger buffer gets the same bytes: reading
// state may have effects (TTL restamps, expired entries removed), so the
// retry must not read again. Any other state call forgets it.
type retry struct {
	valid bool
	name  string
	state uint32
	key   []byte
	data  []byte
}

// stateImport is one state or timer host function.
type stateImport struct {
	name    string
	params  []api.ValueType
	results []api.ValueType
	fn      api.GoModuleFunc
}

var stateImports = []stateImport{
	{abi.ImportEnter, []api.ValueType{i32}, nil, hostEnter},
	{abi.ImportValueGet, []api.ValueType{i32, i32, i32}, []api.ValueType{i32}, hostValueGet},
	{abi.ImportValueSet, []api.ValueType{i32, i32, i32}, nil, hostValueSet},
	{abi.ImportStateClear, []api.ValueType{i32}, nil, hostStateClear},
	{abi.ImportListAppend, []api.ValueType{i32, i32, i32}, nil, hostListAppend},
	{abi.ImportListGet, []api.ValueType{i32, i32, i32}, []api.ValueType{i32}, hostListGet},
	{abi.ImportMapGet, []api.ValueType{i32, i32, i32, i32, i32}, []api.ValueType{i32}, hostMapGet},
	{abi.ImportMapPut, []api.ValueType{i32, i32, i32, i32, i32}, nil, hostMapPut},
	{abi.ImportMapRemove, []api.ValueType{i32, i32, i32}, nil, hostMapRemove},
	{abi.ImportMapEntries, []api.ValueType{i32, i32, i32}, []api.ValueType{i32}, hostMapEntries},
	{abi.ImportTimerRegister, []api.ValueType{i32, i64}, nil, hostTimerRegister},
	{abi.ImportTimerDelete, []api.ValueType{i32, i64}, nil, hostTimerDelete},
}

// exportStateImports adds the state and timer functions to the platform
// host module.
func exportStateImports(b wazero.HostModuleBuilder) wazero.HostModuleBuilder {
	for _, imp := range stateImports {
		b = b.NewFunctionBuilder().WithGoModuleFunction(imp.fn, imp.params, imp.results).Export(imp.name)
	}
	return b
}

// trap fails the running guest call: wazero turns the panic into the call's
// error, wrapping err.
func trap(name string, err error) {
	panic(fmt.Errorf("%s.%s: %w", abi.HostModule, name, err))
}

// stateEnv returns the calling instance and its Env, trapping without one.
// It forgets a kept result unless the call is its retry (keep).
func stateEnv(ctx context.Context, name string, keep bool) (*instance, Env) {
	inst, ok := ctx.Value(instanceKey{}).(*instance)
	if !ok || inst.env == nil {
		trap(name, errNoEnv)
	}
	if !keep {
		inst.retry.valid = false
	}
	return inst, inst.env
}

// guest returns the guest memory [ptr, ptr+n), trapping when it is outside
// memory.
func guest(mod api.Module, name string, ptr, n uint32) []byte {
	mem := mod.Memory()
	if mem != nil {
		if b, ok := mem.Read(ptr, n); ok {
			return b
		}
	}
	var size uint32
	if mem != nil {
		size = mem.Size()
	}
	trap(name, fmt.Errorf("[%d, %d) is outside memory of %d bytes", ptr, uint64(ptr)+uint64(n), size))
	return nil
}

// deliver answers a buffer-filling import: it copies data (after a u32
// count when counted) into buf if it fits and returns its length. When it
// does not fit, it keeps the data for the retry.
func (i *instance) deliver(name string, state uint32, key []byte, buf []byte, counted bool, count int, data []byte) uint64 {
	n := len(data)
	if counted {
		n += 4
	}
	if n <= len(buf) {
		if counted {
			binary.LittleEndian.PutUint32(buf, uint32(count))
			copy(buf[4:], data)
		} else {
			copy(buf, data)
		}
		i.retry.valid = false
		return api.EncodeI32(int32(n))
	}
	r := &i.retry
	r.valid, r.name, r.state = true, name, state
	r.key = append(r.key[:0], key...)
	r.data = r.data[:0]
	if counted {
		r.data = binary.LittleEndian.AppendUint32(r.data, uint32(count))
	}
	r.data = append(r.data, data...)
	return api.EncodeI32(int32(n))
}

// read answers a buffer-filling import of state (and user key): from the
// result kept for a retry when the call is one, else from what fetch reads,
// -1 when it finds nothing (value and map reads; list and entries reads
// find a count of 0).
func (i *instance) read(name string, state uint32, key, buf []byte, counted bool, fetch func() (count int, data []byte, ok bool, err error)) uint64 {
	if n, ok := i.retried(name, state, key, buf); ok {
		return n
	}
	count, data, ok, err := fetch()
	if err != nil {
		trap(name, err)
	}
	if !ok {
		return api.EncodeI32(-1)
	}
	return i.deliver(name, state, key, buf, counted, count, data)
}

// retried answers a retry from the kept result, when the call is one.
func (i *instance) retried(name string, state uint32, key, buf []byte) (uint64, bool) {
	r := &i.retry
	if !r.valid || r.name != name || r.state != state || !bytes.Equal(r.key, key) {
		r.valid = false
		return 0, false
	}
	n := len(r.data)
	if n <= len(buf) {
		copy(buf, r.data)
		r.valid = false
	}
	return api.EncodeI32(int32(n)), true
}

func hostEnter(ctx context.Context, _ api.Module, stack []uint64) {
	_, env := stateEnv(ctx, abi.ImportEnter, false)
	if err := env.Enter(api.DecodeU32(stack[0])); err != nil {
		trap(abi.ImportEnter, err)
	}
}

func hostValueGet(ctx context.Context, mod api.Module, stack []uint64) {
	const name = abi.ImportValueGet
	inst, env := stateEnv(ctx, name, true)
	state := api.DecodeU32(stack[0])
	buf := guest(mod, name, api.DecodeU32(stack[1]), api.DecodeU32(stack[2]))
	stack[0] = inst.read(name, state, nil, buf, false, func() (int, []byte, bool, error) {
		v, ok, err := env.ValueGet(state)
		return 0, v, ok, err
	})
}

func hostValueSet(ctx context.Context, mod api.Module, stack []uint64) {
	const name = abi.ImportValueSet
	_, env := stateEnv(ctx, name, false)
	v := guest(mod, name, api.DecodeU32(stack[1]), api.DecodeU32(stack[2]))
	if err := env.ValueSet(api.DecodeU32(stack[0]), v); err != nil {
		trap(name, err)
	}
}

func hostStateClear(ctx context.Context, _ api.Module, stack []uint64) {
	const name = abi.ImportStateClear
	_, env := stateEnv(ctx, name, false)
	if err := env.Clear(api.DecodeU32(stack[0])); err != nil {
		trap(name, err)
	}
}

func hostListAppend(ctx context.Context, mod api.Module, stack []uint64) {
	const name = abi.ImportListAppend
	_, env := stateEnv(ctx, name, false)
	v := guest(mod, name, api.DecodeU32(stack[1]), api.DecodeU32(stack[2]))
	if err := env.ListAppend(api.DecodeU32(stack[0]), v); err != nil {
		trap(name, err)
	}
}

func hostListGet(ctx context.Context, mod api.Module, stack []uint64) {
	const name = abi.ImportListGet
	inst, env := stateEnv(ctx, name, true)
	state := api.DecodeU32(stack[0])
	buf := guest(mod, name, api.DecodeU32(stack[1]), api.DecodeU32(stack[2]))
	stack[0] = inst.read(name, state, nil, buf, true, func() (int, []byte, bool, error) {
		count, elems, err := env.ListGet(state)
		return count, elems, true, err
	})
}

func hostMapGet(ctx context.Context, mod api.Module, stack []uint64) {
	const name = abi.ImportMapGet
	inst, env := stateEnv(ctx, name, true)
	state := api.DecodeU32(stack[0])
	key := guest(mod, name, api.DecodeU32(stack[1]), api.DecodeU32(stack[2]))
	buf := guest(mod, name, api.DecodeU32(stack[3]), api.DecodeU32(stack[4]))
	stack[0] = inst.read(name, state, key, buf, false, func() (int, []byte, bool, error) {
		v, ok, err := env.MapGet(state, key)
		return 0, v, ok, err
	})
}

func hostMapPut(ctx context.Context, mod api.Module, stack []uint64) {
	const name = abi.ImportMapPut
	_, env := stateEnv(ctx, name, false)
	key := guest(mod, name, api.DecodeU32(stack[1]), api.DecodeU32(stack[2]))
	v := guest(mod, name, api.DecodeU32(stack[3]), api.DecodeU32(stack[4]))
	if err := env.MapPut(api.DecodeU32(stack[0]), key, v); err != nil {
		trap(name, err)
	}
}

func hostMapRemove(ctx context.Context, mod api.Module, stack []uint64) {
	const name = abi.ImportMapRemove
	_, env := stateEnv(ctx, name, false)
	key := guest(mod, name, api.DecodeU32(stack[1]), api.DecodeU32(stack[2]))
	if err := env.MapRemove(api.DecodeU32(stack[0]), key); err != nil {
		trap(name, err)
	}
}

func hostMapEntries(ctx context.Context, mod api.Module, stack []uint64) {
	const name = abi.ImportMapEntries
	inst, env := stateEnv(ctx, name, true)
	state := api.DecodeU32(stack[0])
	buf := guest(mod, name, api.DecodeU32(stack[1]), api.DecodeU32(stack[2]))
	stack[0] = inst.read(name, state, nil, buf, true, func() (int, []byte, bool, error) {
		count, entries, err := env.MapEntries(state)
		return count, entries, true, err
	})
}

// timerDomain checks a guest's time domain argument.
func timerDomain(name string, v uint64) abi.TimeDomain {
	d := api.DecodeU32(v)
	if d != uint32(abi.EventTime) && d != uint32(abi.ProcessingTime) {
		trap(name, fmt.Errorf("time domain %d: want 0 (event time) or 1 (processing time)", d))
	}
	return abi.TimeDomain(d)
}

func hostTimerRegister(ctx context.Context, _ api.Module, stack []uint64) {
	const name = abi.ImportTimerRegister
	_, env := stateEnv(ctx, name, false)
	if err := env.RegisterTimer(timerDomain(name, stack[0]), int64(stack[1])); err != nil {
		trap(name, err)
	}
}

func hostTimerDelete(ctx context.Context, _ api.Module, stack []uint64) {
	const name = abi.ImportTimerDelete
	_, env := stateEnv(ctx, name, false)
	if err := env.DeleteTimer(timerDomain(name, stack[0]), int64(stack[1])); err != nil {
		trap(name, err)
	}
}
