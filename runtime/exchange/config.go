package exchange

import (
	"fmt"
	"time"
)

// Defaults for the zero fields of a Config.
const (
	DefaultBufferSize          = 32 << 10
	DefaultExclusivePerChannel = 2
	DefaultFloatingPerGate     = 8
	DefaultMaxRecordSize       = 8 << 20
	// defaultSpareBuffers is what a writer's pool holds beyond one buffer
	// per channel.
	defaultSpareBuffers = 8
	// minBufferSize leaves room for a frame header and some record bytes.
	minBufferSize = 16
)

// Config sizes an edge or a gate. Zero fields take their defaults.
type Config struct {
	// BufferSize is the size of a buffer in bytes.
	BufferSize int
	// ExclusivePerChannel is the number of credits (exclusive buffers) of
	// each input channel of an edge.
	ExclusivePerChannel int
	// FloatingPerGate is the number of floating buffers a gate grants to
	// its backlogged channels. Only NewGate reads it.
	FloatingPerGate int
	// BuffersPerWriter bounds a writer's pool: what it fills, what waits in
	// its backlogs and what its consumers hold, together. The default is
	// one per channel plus 8; it must be at least one per channel, else a
	// writer could hold every buffer partially filled and wait forever.
	BuffersPerWriter int
	// BufferTimeout is the flush policy. Greater than 0: a partially filled
	// buffer is sent at most this long after it was started. 0: every
	// record is sent at once. Less than 0: a buffer is sent when it is
	// full, on an event, or on Flush.
	BufferTimeout time.Duration
	// MaxRecordSize bounds an encoded record; a record larger than a buffer
	// spans several buffers of its channel.
	MaxRecordSize int
}

// withDefaults fills the zero fields; consumers sizes the writer pool. It
// panics on sizes that cannot work, which are programming errors.
func (c Config) withDefaults(consumers int) Config {
	def := func(name string, v *int, d int) {
		switch {
		case *v == 0:
			*v = d
		case *v < 0:
			panic(fmt.Sprintf("exchange: Config.%s is %d, want >= 0", name, *v))
		}
	}
	def("BufferSize", &c.BufferSize, DefaultBufferSize)
	def("ExclusivePerChannel", &c.ExclusivePerChannel, DefaultExclusivePerChannel)
	def("FloatingPerGate", &c.FloatingPerGate, DefaultFloatingPerGate)
	def("BuffersPerWriter", &c.BuffersPerWriter, consumers+defaultSpareBuffers)
	def("MaxRecordSize", &c.MaxRecordSize, DefaultMaxRecordSize)
	if c.BuffersPerWriter < consumers {
		panic(fmt.Sprintf("exchange: Config.BuffersPerWriter is %d, want >= %d (one per channel)", c.BuffersPerWriter, consumers))
	}
	if c.BufferSize < minBufferSize {
		panic(fmt.Sprintf("exchange: Config.BufferSize is %d, want >= %d", c.BufferSize, minBufferSize))
	}
	return c
}
