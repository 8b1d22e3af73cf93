package host

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero/api"

	"wasmstream.io/platform/abi"
)

// Instance limits used when InstanceConfig leaves them zero.
const (
	DefaultMemoryLimit = 64 << 20
	DefaultCallTimeout = 10 * time.Second
)

// InstanceConfig sets the limits and log attributes of a Guest's instances.
type InstanceConfig struct {
	// MemoryLimit is the most guest memory in bytes, rounded down to
	// 64 KiB pages; 0 (or less) means DefaultMemoryLimit.
	MemoryLimit int64
	// CallTimeout bounds one Call; 0 (or less) means DefaultCallTimeout.
	CallTimeout time.Duration
	// Attrs are added to every guest log line (job, vertex, subtask).
	Attrs []slog.Attr
	// LogLinesPerSecond bounds the guest's log lines (platform.log, stdout
	// and stderr together); past it lines are dropped and a WARN line "N
	// lines dropped" says how many. 0 means DefaultLogLinesPerSecond, a
	// negative number no limit.
	LogLinesPerSecond int
}

// Guest runs the functions of one module for one task on one instance, which
// it keeps between calls and replaces after a failure. It is owned by one
// goroutine: Call and Close must not run concurrently. It must be closed,
// which stops its watchdog goroutine.
type Guest struct {
	module  *Module
	pages   uint32
	timeout time.Duration
	attrs   []slog.Attr
	limiter *logLimiter

	code  *compiled
	inst  *instance
	stack [3]uint64
	// live is inst, for the watchdog.
	live    atomic.Pointer[instance]
	created atomic.Int64
	// memory is the live instance's memory size after its last call.
	memory atomic.Int64
	dog    *watchdog
	closed bool
}

// NewGuest creates a Guest; its first Call instantiates the module (or takes
// an idle instance).
func (m *Module) NewGuest(cfg InstanceConfig) *Guest {
	if cfg.MemoryLimit <= 0 {
		cfg.MemoryLimit = DefaultMemoryLimit
	}
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = DefaultCallTimeout
	}
	g := &Guest{module: m, pages: limitPages(cfg.MemoryLimit), timeout: cfg.CallTimeout, attrs: cfg.Attrs}
	switch n := cfg.LogLinesPerSecond; {
	case n == 0:
		g.limiter = &logLimiter{perSecond: DefaultLogLinesPerSecond}
	case n > 0:
		g.limiter = &logLimiter{perSecond: n}
	}
	return g
}

var errGuestClosed = errors.New("guest closed")

// Call runs function fn (an index into Description.Functions) over an input
// frame and returns the output frame, which aliases guest memory and stays
// valid until the next Call or Close. A failure inside the guest is a
// *CallError, after which the instance is discarded and the next Call runs
// on a fresh one. ctx is checked before the call; a running call is bounded
// by the CallTimeout.
func (p *Guest) Call(ctx context.Context, fn int, frame []byte) ([]byte, error) {
	return p.CallWith(ctx, fn, frame, nil)
}

// CallWith is Call for a keyed function: the guest's state and timer imports
// act on env during the call (nil: they trap).
func (p *Guest) CallWith(ctx context.Context, fn int, frame []byte, env Env) ([]byte, error) {
	if err := p.check(ctx, fn, frame); err != nil {
		return nil, err
	}
	name := p.module.Description.Functions[fn].Name
	inst := p.inst
	if inst == nil {
		var err error
		if inst, err = p.acquire(ctx, name); err != nil {
			return nil, err
		}
	}
	inst.function = name
	inst.env = env
	out, kind, err := p.run(inst, fn, frame)
	inst.env, inst.retry.valid = nil, false
	if err != nil {
		p.discard(ctx)
		return nil, p.callError(name, kind, err)
	}
	p.memory.Store(int64(inst.mem.Size()))
	return out, nil
}

func (p *Guest) check(ctx context.Context, fn int, frame []byte) error {
	switch {
	case p.closed:
		return fmt.Errorf("udf[%s]: %w", p.module.ID, errGuestClosed)
	case p.module.host.closed.Load():
		return fmt.Errorf("udf[%s]: %w", p.module.ID, errHostClosed)
	case fn < 0 || fn >= len(p.module.Description.Functions):
		return fmt.Errorf("udf[%s]: function %d of %d", p.module.ID, fn, len(p.module.Description.Functions))
	case uint64(len(frame)) > math.MaxUint32:
		return fmt.Errorf("udf[%s]: frame of %d bytes exceeds 4 GiB", p.module.ID, len(frame))
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("udf[%s]: %w", p.module.ID, err)
	}
	return nil
}

// run places the frame in guest memory, calls the function and returns the
// output's view of guest memory.
func (p *Guest) run(inst *instance, fn int, frame []byte) ([]byte, ErrorKind, error) {
	s := p.stack[:]
	inst.start.Store(p.module.host.now())
	ptr := inst.region
	if uint32(len(frame)) > inst.regionSize || inst.regionSize == 0 {
		s[0] = api.EncodeU32(uint32(len(frame)))
		if err := inst.alloc.CallWithStack(inst.ctx, s[:1]); err != nil {
			kind, err := inst.classify(err, inst.finish())
			return nil, kind, fmt.Errorf("%s: %w", abi.ExportAlloc, err)
		}
		ptr = api.DecodeU32(s[0])
		inst.region, inst.regionSize = ptr, uint32(len(frame))
	}
	if !inst.mem.Write(ptr, frame) {
		inst.finish()
		return nil, KindBadOutput, fmt.Errorf("%s: region [%d, %d) outside memory of %d bytes",
			abi.ExportAlloc, ptr, uint64(ptr)+uint64(len(frame)), inst.mem.Size())
	}
	s[0], s[1], s[2] = api.EncodeU32(uint32(fn)), api.EncodeU32(ptr), api.EncodeU32(uint32(len(frame)))
	err := inst.call.CallWithStack(inst.ctx, s[:])
	if expired := inst.finish(); err != nil || expired {
		kind, err := inst.classify(err, expired)
		if kind == KindDeadline {
			err = fmt.Errorf("call timeout %s: %w", p.timeout, err)
		}
		return nil, kind, err
	}
	optr, olen := abi.Unpack(s[0])
	out, ok := inst.mem.Read(optr, olen)
	if !ok {
		return nil, KindBadOutput, fmt.Errorf("output [%d, %d) outside memory of %d bytes",
			optr, uint64(optr)+uint64(olen), inst.mem.Size())
	}
	return out, "", nil
}

func (p *Guest) callError(function string, kind ErrorKind, err error) *CallError {
	return &CallError{Module: p.module.ID, Function: function, Kind: kind, Err: err}
}

// acquire makes an instance live: an idle one, or a new one it initialises.
func (p *Guest) acquire(ctx context.Context, function string) (*instance, error) {
	if p.module.minPages > p.pages {
		return nil, p.callError(function, KindMemoryLimit, fmt.Errorf("module needs %d bytes of memory, limit %d",
			limitBytes(p.module.minPages), limitBytes(p.pages)))
	}
	if p.code == nil {
		c, err := p.module.compiledFor(ctx, p.pages)
		if err != nil {
			return nil, fmt.Errorf("udf[%s]: %w", p.module.ID, err)
		}
		p.code = c
	}
	if p.dog == nil {
		p.dog = startWatchdog(p)
	}
	inst := p.code.take()
	fresh := inst == nil
	if fresh {
		var err error
		if inst, err = p.code.instantiate(context.Background()); err != nil {
			kind := KindTrap
			var refused *budgetExceeded
			if errors.As(err, &refused) {
				kind = KindMemoryLimit
			}
			return nil, p.callError(function, kind, err)
		}
		p.created.Add(1)
	}
	inst.attrs, inst.limiter = p.attrs, p.limiter
	p.inst = inst
	p.live.Store(inst)
	if fresh {
		if kind, err := inst.initialize(p.module.host.now()); err != nil {
			p.discard(ctx)
			if kind == KindDeadline {
				err = fmt.Errorf("call timeout %s: %w", p.timeout, err)
			}
			return nil, p.callError(function, kind, err)
		}
	}
	return inst, nil
}

// discard closes the live instance after a failure.
func (p *Guest) discard(ctx context.Context) {
	inst := p.inst
	p.inst = nil
	p.live.Store(nil)
	p.memory.Store(0)
	if err := inst.close(ctx); err != nil {
		p.module.host.log.LogAttrs(ctx, slog.LevelWarn, "discard instance", inst.logAttrs(slog.Any("error", err))...)
	}
}

// Instantiations is how many instances this Guest has created. It may be
// read from any goroutine.
func (p *Guest) Instantiations() int64 { return p.created.Load() }

// MemoryBytes is the guest memory size of the live instance after its last
// call, 0 if none. It may be read from any goroutine.
func (p *Guest) MemoryBytes() int64 { return p.memory.Load() }

// Close stops the watchdog and hands a healthy instance to the module's idle
// list (or closes it). Slices returned by Call are invalid afterwards.
func (p *Guest) Close(ctx context.Context) error {
	if p.closed {
		return nil
	}
	p.closed = true
	if p.dog != nil {
		p.dog.stop()
	}
	inst := p.inst
	if inst == nil {
		return nil
	}
	p.inst = nil
	p.live.Store(nil)
	p.memory.Store(0)
	inst.stdout.flush()
	inst.stderr.flush()
	if p.limiter != nil {
		p.limiter.flush(ctx, p.module.host.log, inst.logAttrs())
	}
	inst.attrs, inst.limiter = nil, nil
	if err := p.code.release(ctx, inst); err != nil {
		return fmt.Errorf("udf[%s]: %w", p.module.ID, err)
	}
	return nil
}
