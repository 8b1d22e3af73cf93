package window

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/plan"
	"wasmstream.io/platform/state"
	"wasmstream.io/platform/watermark"
)

// windowState is the per-window keyed state of a window_process function
// whose module declares states, as Flink's ProcessWindowFunction's
// windowState(): a call's group g enters the state of its key and window
// (the namespace appendWindowNamespace encodes). A window's state is cleared when
// its contents are dropped, at its end - 1 + allowed lateness (end - 1 in
// processing time), by a cleanup timer per key and window that it keeps,
// checkpoints and restores with the state, so that state moves with its key
// group when parallelism changes. It belongs to the task goroutine.
type windowState struct {
	keyed *state.Keyed
	// states is the number of declared states.
	states int
	env    windowEnv
	// cleanup holds a timer per key and window with state, at the time the
	// window's state is cleared.
	cleanup  *watermark.TimerService
	domain   abi.TimeDomain
	lateness int64
	// spaces holds the namespaces of the firings of a call, 16 bytes each:
	// the env's views into it stay valid until the firings change.
	spaces []byte
	// purge is clearWindow, bound once so that passing it does not
	// allocate.
	purge func(watermark.Timer) error
	// clearing, when set, is told of each window about to be cleared
	// (Config.Clearing).
	clearing func(key []byte, start, end int64) error
}

// windowNamespaceLen is the length of a window's namespace.
const windowNamespaceLen = 16

// appendWindowNamespace appends window [start, end)'s namespace: start and
// end big-endian with the sign bit flipped, so that byte order is time order.
func appendWindowNamespace(dst []byte, start, end int64) []byte {
	dst = binary.BigEndian.AppendUint64(dst, uint64(start)^1<<63)
	return binary.BigEndian.AppendUint64(dst, uint64(end)^1<<63)
}

func newWindowState(keyed *state.Keyed, states int, wp *plan.Window) *windowState {
	s := &windowState{keyed: keyed, states: states, cleanup: watermark.NewTimerService(), domain: abi.EventTime, lateness: wp.Lateness}
	if wp.Processing {
		s.domain, s.lateness = abi.ProcessingTime, 0
	}
	s.env.KeyedEnv = operator.NewKeyedEnv(keyed, nil)
	s.purge = s.clearWindow
	return s
}

// prepare encodes the namespaces of fs before a call over them.
func (s *windowState) prepare(fs []firing) {
	s.spaces = s.spaces[:0]
	for i := range fs {
		s.spaces = appendWindowNamespace(s.spaces, fs[i].start, fs[i].end)
	}
}

// Begin starts a frame's groups.
func (s *windowState) Begin() { s.env.Begin() }

// add declares firing i of the prepared ones as the frame's next group and
// notes when its state is to be cleared.
func (s *windowState) add(i int, fr *firing) {
	ns := s.spaces[i*windowNamespaceLen : (i+1)*windowNamespaceLen : (i+1)*windowNamespaceLen]
	s.env.Add(fr.key, ns)
	s.cleanup.Register(s.domain, operator.AddTime(fr.end-1, s.lateness), fr.key, ns)
}

// clearDue clears the state of every window whose contents are dropped by
// upTo in domain d.
func (s *windowState) clearDue(d abi.TimeDomain, upTo int64) error {
	if d != s.domain {
		return nil
	}
	return s.cleanup.Advance(d, upTo, s.purge)
}

// clearWindow clears every state of a timer's key and window.
func (s *windowState) clearWindow(t watermark.Timer) error {
	if err := s.keyed.SetKey(t.Key); err != nil {
		return err
	}
	s.keyed.SetNamespace(t.Namespace)
	if s.clearing != nil {
		start := int64(binary.BigEndian.Uint64(t.Namespace) ^ 1<<63)
		end := int64(binary.BigEndian.Uint64(t.Namespace[8:]) ^ 1<<63)
		if err := s.clearing(t.Key, start, end); err != nil {
			return err
		}
	}
	for id := range s.states {
		if err := s.keyed.Clear(id); err != nil {
			return err
		}
	}
	return nil
}

// snapshot captures the state and its cleanup timers.
func (s *windowState) snapshot(ctx context.Context) (*state.Snapshot, error) {
	ts := s.cleanup.Timers(s.domain)
	timers := make([]state.Timer, len(ts))
	for i, t := range ts {
		timers[i] = state.Timer{Domain: uint8(s.domain), Timestamp: t.Timestamp, Key: t.Key, Namespace: t.Namespace}
	}
	return s.keyed.Snapshot(ctx, timers)
}

// restore loads the state and cleanup timers of the subtask's key groups.
func (s *windowState) restore(ctx context.Context, srcs []io.Reader) error {
	timers, err := s.keyed.Restore(ctx, srcs)
	if err != nil {
		return err
	}
	for _, t := range timers {
		s.cleanup.Register(abi.TimeDomain(t.Domain), t.Timestamp, t.Key, t.Namespace)
	}
	return nil
}

// errWindowTimers is the trap of a timer import in a window_process call.
var errWindowTimers = errors.New("window_process functions have no timers (as Flink's ProcessWindowFunction); a window fires when the watermark passes its end")

// windowEnv is the env of window_process calls: keyed state scoped to each
// group's key and window, and no timers.
type windowEnv struct {
	operator.KeyedEnv
}

func (e *windowEnv) RegisterTimer(abi.TimeDomain, int64) error { return errWindowTimers }
func (e *windowEnv) DeleteTimer(abi.TimeDomain, int64) error   { return errWindowTimers }

// windowStateFail names the operator in a state failure outside a call.
func windowStateFail(vertex string, err error) error {
	return fmt.Errorf("operator[%s]: window state: %w", vertex, err)
}
