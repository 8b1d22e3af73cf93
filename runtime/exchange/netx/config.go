package netx

import (
	"time"

	"wasmstream.io/platform/runtime/exchange"
)

// DefaultRefresh is the default Config.Refresh.
const DefaultRefresh = time.Second

// firstHello is how long a sender waits for its receiver before its second
// hello; the wait doubles up to Config.Refresh.
const firstHello = 10 * time.Millisecond

// Config configures a Sender or a Receiver.
type Config struct {
	// Exchange is the edge's exchange configuration, the same on both
	// sides: it bounds what a message may hold and sizes a receiver's
	// pending limits. Zero fields take exchange's defaults.
	Exchange exchange.Config
	// Refresh is how often a receiver repeats its announcements on every
	// channel that has not ended, so that a lost control message only
	// delays its sender; a sender repeats its hello at most this far apart
	// until its receiver answers. 0 means DefaultRefresh.
	Refresh time.Duration
	// Failed, when not nil, is called once, on a goroutine of the
	// endpoint's, with the error that stopped it: exec fails the task with
	// it. A receiver fails its gate as well, so Gate.Next returns the error.
	Failed func(error)
	// Overtaken receives, in a receiver, each frame an overtaking barrier
	// overtook in the gate (channel is its index in the gate), under the
	// gate's mutex, for the consumer's checkpoint to record as in-flight
	// input: it must copy what it keeps and must not block. Nil drops them,
	// which is right only for a job without unaligned checkpoints.
	Overtaken func(channel int, ev exchange.Event, frame []byte)

	// publish replaces Conn.Publish in a sender, for tests to lose or
	// reorder messages.
	publish func(subject string, data []byte) error
}

func (c Config) refresh() time.Duration {
	if c.Refresh <= 0 {
		return DefaultRefresh
	}
	return c.Refresh
}

// sizes are the exchange sizes a message is checked against.
type sizes struct {
	buffer, maxRecord, exclusive, floating, pool int
}

func (c Config) sizes() sizes {
	s := sizes{c.Exchange.BufferSize, c.Exchange.MaxRecordSize, c.Exchange.ExclusivePerChannel, c.Exchange.FloatingPerGate, c.Exchange.BuffersPerWriter}
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&s.buffer, exchange.DefaultBufferSize)
	def(&s.maxRecord, exchange.DefaultMaxRecordSize)
	def(&s.exclusive, exchange.DefaultExclusivePerChannel)
	def(&s.floating, exchange.DefaultFloatingPerGate)
	// A writer's default pool depends on its number of consumers, which a
	// receiver does not know: assume many.
	def(&s.pool, 256)
	return s
}

// maxMessage is the largest message a sender publishes.
func (s sizes) maxMessage() int { return headerSize + fragmentSize + s.buffer }

// pendingLimits bound what the NATS client may hold for a data
// subscription before it drops messages (slow consumer). Credits bound the
// data buffers in flight on a channel to the exclusive credits and the
// gate's floating buffers; the sender's pool bounds its events, and each
// buffer of it owes at most one backlog announcement. Twice that leaves
// the client room for a handler that falls behind for a while, and it
// never does in normal operation: Receive does not block.
func (s sizes) pendingLimits() (msgs, bytes int) {
	data := s.exclusive + s.floating
	msgs = 2 * (data + 2*s.pool + 16)
	bytes = 2*data*s.maxMessage() + msgs*64
	return msgs, bytes
}
