package exec

import (
	"fmt"

	"wasmstream.io/platform/runtime/exchange"
)

// Defaults of the zero fields of Budgets.
const (
	DefaultKeyedStateBudget     = 1 << 30
	DefaultWindowContentsBudget = 256 << 20
	DefaultInFlightBudget       = 64 << 20
	DefaultSinkStagingBudget    = 64 << 20
)

// Budgets bound the memory of a worker's subtasks, each kind of memory on
// its own, so that overload becomes backpressure or a clear failure, never
// an out-of-memory kill. Every field is a configuration key (budgets.*,
// docs/OPERATIONS.md); zero takes the default.
type Budgets struct {
	// KeyedState bounds a job's keyed state (and interval-join buffers)
	// when its spec sets no state.budget: past it the job fails with a
	// message that says so.
	KeyedState int64
	// WindowContents bounds what one window operator subtask buffers
	// (keys, panes, accumulators, records).
	WindowContents int64
	// InFlight bounds the in-flight data one task records for one
	// unaligned checkpoint; past it the task declines that checkpoint.
	InFlight int64
	// SinkStaging bounds the output an exactly-once sink subtask stages in
	// memory for one checkpoint; past it the rest spills to the data
	// directory.
	SinkStaging int64
	// ExchangeBufferSize is the bytes of one exchange buffer;
	// ExchangeExclusive the buffers (credits) of each input channel;
	// ExchangeFloating the floating buffers of a task's input gate.
	ExchangeBufferSize int
	ExchangeExclusive  int
	ExchangeFloating   int
}

// WithDefaults fills the zero fields.
func (b Budgets) WithDefaults() Budgets {
	def := func(v *int64, d int64) {
		if *v == 0 {
			*v = d
		}
	}
	def(&b.KeyedState, DefaultKeyedStateBudget)
	def(&b.WindowContents, DefaultWindowContentsBudget)
	def(&b.InFlight, DefaultInFlightBudget)
	def(&b.SinkStaging, DefaultSinkStagingBudget)
	return b
}

// Check names the first field that cannot work.
func (b Budgets) Check() error {
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"budgets.keyed_state", b.KeyedState}, {"budgets.window_contents", b.WindowContents},
		{"budgets.in_flight", b.InFlight}, {"budgets.sink_staging", b.SinkStaging},
		{"budgets.exchange_buffer_size", int64(b.ExchangeBufferSize)},
		{"budgets.exchange_exclusive_buffers", int64(b.ExchangeExclusive)},
		{"budgets.exchange_floating_buffers", int64(b.ExchangeFloating)},
	} {
		if f.v < 0 {
			return fmt.Errorf("%s: must not be negative, got %d", f.name, f.v)
		}
	}
	if b.ExchangeBufferSize != 0 && b.ExchangeBufferSize < 1024 {
		return fmt.Errorf("budgets.exchange_buffer_size: must be at least 1024 bytes, got %d", b.ExchangeBufferSize)
	}
	return nil
}

// exchange sizes an edge or a gate from c, which sets the buffer timeout.
func (b Budgets) exchange(c exchange.Config) exchange.Config {
	c.BufferSize, c.ExclusivePerChannel, c.FloatingPerGate = b.ExchangeBufferSize, b.ExchangeExclusive, b.ExchangeFloating
	return c
}
