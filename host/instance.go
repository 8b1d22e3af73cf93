package host

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/sys"

	"wasmstream.io/platform/abi"
)

// instanceKey carries the *instance in the context of its calls, where the
// host functions find it.
type instanceKey struct{}

// expiredStamp marks in instance.start a call that has been stopped.
const expiredStamp = -1

var (
	// errExpired reports a call stopped after it had returned, or before
	// it began.
	errExpired = errors.New("call ran past its deadline")
	// errStopped reports a call stopped while it ran. It is the error
	// wazero gives for a call it stops on a cancelled context, which is
	// how the host stopped calls before it instrumented modules.
	errStopped = sys.NewExitError(sys.ExitCodeContextCanceled)
)

// instance is one instantiated guest. Between calls it holds no state that
// matters, so it is discarded after any failure.
type instance struct {
	code  *compiled
	mod   api.Module
	mem   api.Memory
	alloc api.Function
	call  api.Function
	// region and regionSize are the input region platform_alloc returned
	// last; it stays valid until the next platform_alloc, so frames that
	// fit reuse it without a call.
	region, regionSize uint32
	// ctx lives as long as the instance and carries it to the host
	// functions; it is cancelled when a call is stopped or the instance
	// closed.
	ctx    context.Context
	cancel context.CancelFunc
	// stop is the stop flag the instrumenter added to the module: set to
	// 1, it makes the running call trap within checkBudget loop
	// iterations. Only interrupt and halt set it, from another goroutine
	// than the caller's, and nothing resets it: a stopped instance is
	// discarded.
	stop api.MutableGlobal
	// start is the Host.now of the running call's start, 0 between calls
	// and expiredStamp once the call has been stopped.
	start atomic.Int64
	// function and attrs describe the current call in guest logs; only
	// the goroutine that owns the instance sets them.
	function string
	attrs    []slog.Attr
	stdout   lineWriter
	stderr   lineWriter

	// limiter is the owning Guest's log rate limit, nil for none.
	limiter *logLimiter
	// env serves the state and timer imports during a CallWith, and retry
	// keeps the result of one that did not fit the guest's buffer
	// (state.go); only the owning goroutine uses them.
	env   Env
	retry retry
	// memory backs the instance's linear memory and holds its share of
	// the Host's memory budget.
	memory *linearMemory
}

// instantiate creates an instance whose context derives from parent. It
// runs no guest code: the module's start function and _initialize run in
// initialize, once the instance's stop flag can stop them.
func (c *compiled) instantiate(parent context.Context) (*instance, error) {
	inst := &instance{code: c}
	inst.stdout = lineWriter{inst: inst, stream: "stdout", level: slog.LevelInfo}
	inst.stderr = lineWriter{inst: inst, stream: "stderr", level: slog.LevelWarn}
	inst.ctx, inst.cancel = context.WithCancel(context.WithValue(parent, instanceKey{}, inst))
	cfg := wazero.NewModuleConfig().
		WithName("").
		WithStartFunctions().
		WithStdout(&inst.stdout).
		WithStderr(&inst.stderr).
		WithSysWalltime().
		WithSysNanotime().
		WithRandSource(rand.Reader)
	h := c.mod.host
	initial := int64(limitBytes(c.mod.minPages))
	if !h.reserveGuestMemory(initial) {
		inst.cancel()
		return nil, h.budgetError(initial)
	}
	inst.memory = newLinearMemory(h, initial)
	mod, err := c.eng.rt.InstantiateModule(experimental.WithMemoryAllocator(inst.ctx, inst.memory), c.code, cfg)
	if err != nil {
		inst.cancel()
		inst.memory.Free()
		return nil, fmt.Errorf("instantiate: %w", err)
	}
	stop, ok := mod.ExportedGlobal(stopExport).(api.MutableGlobal)
	if !ok {
		inst.cancel()
		return nil, errors.Join(fmt.Errorf("instantiate: module without the %s global", stopExport), mod.Close(parent))
	}
	inst.mod = mod
	inst.stop = stop
	inst.mem = mod.ExportedMemory(abi.ExportMemory)
	inst.alloc = mod.ExportedFunction(abi.ExportAlloc)
	inst.call = mod.ExportedFunction(abi.ExportCall)
	return inst, nil
}

// startFunction names the module's start function (exported as
// startExport) in errors and logs.
const startFunction = "start function"

// initialize runs what the module runs before its first call: its start
// function (instrument moved it out of instantiation, where nothing could
// stop it) and its reactor initialiser, each when the module has it. Both
// count from stamp: one deadline bounds them together.
func (i *instance) initialize(stamp int64) (ErrorKind, error) {
	for _, name := range [...]string{startExport, abi.ExportInitialize} {
		if i.mod.ExportedFunction(name) == nil {
			continue
		}
		if kind, err := i.invoke(name, nil, stamp); err != nil {
			return kind, err
		}
	}
	return "", nil
}

// invoke calls an export by name outside the hot path, unless halt has
// stopped the instance; a failure comes back classified, its error
// prefixed with the name (startFunction for startExport).
func (i *instance) invoke(name string, stack []uint64, stamp int64) (ErrorKind, error) {
	label := name
	if name == startExport {
		label = startFunction
	}
	i.function = label
	var err error
	if i.start.CompareAndSwap(0, stamp) {
		err = i.mod.ExportedFunction(name).CallWithStack(i.ctx, stack)
	}
	expired := i.finish()
	if err == nil && !expired {
		return "", nil
	}
	kind, err := i.classify(err, expired)
	return kind, fmt.Errorf("%s: %w", label, err)
}

// finish ends a call and reports whether it was stopped.
func (i *instance) finish() bool { return i.start.Swap(0) == expiredStamp }

// interrupt stops the call that started at started, if it is still
// running: it marks the call expired, then sets the stop flag. The owner
// learns of it from finish, whose swap of start is ordered after the
// compare-and-swap here, so a call that the guest sees stopped is always
// reported expired.
func (i *instance) interrupt(started int64) {
	if i.start.CompareAndSwap(started, expiredStamp) {
		i.stop.Set(1)
		i.cancel()
	}
}

// halt stops the instance for good: the running call, or else the next
// one, fails with KindDeadline. Validation uses it when its deadline passes.
func (i *instance) halt() {
	for {
		s := i.start.Load()
		if s == expiredStamp || i.start.CompareAndSwap(s, expiredStamp) {
			break
		}
	}
	i.stop.Set(1)
	i.cancel()
}

// classify names what went wrong in a call that failed with err, or was
// stopped (expired; err is nil when the call returned regardless).
func (i *instance) classify(err error, expired bool) (ErrorKind, error) {
	if expired {
		if err == nil {
			return KindDeadline, errExpired
		}
		return KindDeadline, errStopped
	}
	var exit *sys.ExitError
	isExit := errors.As(err, &exit)
	switch {
	case i.memory.refused > 0:
		h := i.code.mod.host
		return KindMemoryLimit, fmt.Errorf("memory %d bytes, growing to %d refused: host.memory_budget of %d bytes has %d bytes free: %w",
			i.mem.Size(), i.memory.refused, h.budget.limit, max(0, h.budget.limit-h.budget.used.Load()), err)
	case i.nearLimit():
		return KindMemoryLimit, fmt.Errorf("memory %d bytes, limit %d: %w", i.mem.Size(), limitBytes(i.code.eng.pages), err)
	case isExit:
		return KindExit, err
	}
	return KindTrap, err
}

func limitBytes(pages uint32) uint64 { return uint64(pages) * pageSize }

// budgetExceeded is the error of an instantiation the memory budget cannot
// cover.
type budgetExceeded struct{ need, limit, free int64 }

func (e *budgetExceeded) Error() string {
	return fmt.Sprintf("instantiate: memory of %d bytes refused: host.memory_budget of %d bytes has %d bytes free", e.need, e.limit, e.free)
}

// budgetError reports that the budget could not cover need bytes.
func (h *Host) budgetError(need int64) error {
	return &budgetExceeded{need: need, limit: h.budget.limit, free: max(0, h.budget.limit-h.budget.used.Load())}
}

// limitSlack is how close to its limit a guest's memory must be for a
// failure to count as running out of memory: a refused memory.grow leaves
// the memory below the limit by less than the request, and guests grow in
// small steps except Go, whose heap grows by 4 MiB arenas.
func limitSlack(limit uint64) uint64 { return min(4<<20, limit/4) }

// nearLimit reports whether the guest's memory is within limitSlack of the
// limit, where a refused growth is the likely cause of a failure.
func (i *instance) nearLimit() bool {
	limit := limitBytes(i.code.eng.pages)
	return uint64(i.mem.Size())+limitSlack(limit) >= limit
}

// close stops and closes the instance and flushes its partial output lines.
func (i *instance) close(ctx context.Context) error {
	i.cancel()
	i.stdout.flush()
	i.stderr.flush()
	if err := i.mod.Close(ctx); err != nil {
		return fmt.Errorf("close instance of %s: %w", i.code.mod.ID, err)
	}
	return nil
}

// logAttrs are the attributes of a guest log line: module, function, the
// given ones, then the owning Guest's.
func (i *instance) logAttrs(extra ...slog.Attr) []slog.Attr {
	attrs := make([]slog.Attr, 0, 2+len(extra)+len(i.attrs))
	attrs = append(attrs, slog.String("module", i.code.mod.ID), slog.String("function", i.function))
	attrs = append(attrs, extra...)
	return append(attrs, i.attrs...)
}
