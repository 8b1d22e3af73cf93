package exchange

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"wasmstream.io/platform/abi"
)

// Errors a writer returns.
var (
	// ErrClosed: the writer was closed.
	ErrClosed = errors.New("exchange: writer closed")
	// ErrRecordTooLarge is wrapped by the error for a record above
	// Config.MaxRecordSize.
	ErrRecordTooLarge = errors.New("exchange: record too large")
)

// Writer is the sending side of one producer subtask on an edge: one
// subpartition per consumer, and a bounded pool of buffers. Its methods
// except Stats belong to the producer's goroutine.
type Writer struct {
	cfg  Config
	subs []subpartition
	// pool holds the free buffers; its capacity is the pool size.
	pool chan *Buffer
	// freed holds one signal that a buffer came back to pool since the
	// last Freed receive.
	freed chan struct{}
	// flushAlways: BufferTimeout is 0.
	flushAlways bool
	// timer flushes partial buffers when BufferTimeout > 0. Then mu guards
	// subs, armed and err against the timer's goroutine; otherwise the
	// producer's goroutine owns them and mu is unused.
	timer *time.Timer
	mu    sync.Mutex
	armed bool
	// err is sticky: ErrClosed after Close, or the failure that left a
	// spanning record half sent.
	err     error
	blocked waitClock
	buffers atomic.Int64
	bytes   atomic.Int64
}

// subpartition is the writer's side of one channel.
type subpartition struct {
	ch *InputChannel
	// cur is the partially filled buffer, nil if none; n counts its
	// records.
	cur *Buffer
	n   uint32
}

// WriterStats describe a writer's output.
type WriterStats struct {
	// BackpressuredNanos is the total time spent waiting for a free buffer,
	// including a wait in progress.
	BackpressuredNanos int64
	// BuffersSent and BytesSent count the data buffers handed to channels
	// (sent or in a backlog) and their bytes.
	BuffersSent int64
	BytesSent   int64
	// OutPoolUsage is the share of the pool's buffers in use, 0..1.
	OutPoolUsage float64
}

func newWriter(cfg Config, channels []*InputChannel) *Writer {
	w := &Writer{
		cfg:         cfg,
		subs:        make([]subpartition, len(channels)),
		pool:        make(chan *Buffer, cfg.BuffersPerWriter),
		freed:       make(chan struct{}, 1),
		flushAlways: cfg.BufferTimeout == 0,
	}
	for i, c := range channels {
		w.subs[i].ch = c
	}
	for range cfg.BuffersPerWriter {
		w.pool <- &Buffer{pool: w.pool, freed: w.freed}
	}
	if cfg.BufferTimeout > 0 {
		w.timer = time.AfterFunc(cfg.BufferTimeout, w.timedFlush)
		w.timer.Stop()
	}
	return w
}

func (w *Writer) lock() {
	if w.timer != nil {
		w.mu.Lock()
	}
}

func (w *Writer) unlock() {
	if w.timer != nil {
		w.mu.Unlock()
	}
}

// NumChannels is the number of the writer's channels, one per consumer.
func (w *Writer) NumChannels() int { return len(w.subs) }

// Drained says whether every buffer of the writer is back in its pool:
// nothing partial, queued, in flight or held by a consumer.
func (w *Writer) Drained() bool { return len(w.pool) == cap(w.pool) }

// Freed is signalled when a buffer returns to the writer's pool, at most
// one signal pending: a producer waiting for Drained selects on it.
func (w *Writer) Freed() <-chan struct{} { return w.freed }

// acquire takes a free buffer, waiting for one if the pool is empty.
func (w *Writer) acquire(ctx context.Context) (*Buffer, error) {
	var b *Buffer
	select {
	case b = <-w.pool:
	default:
		w.blocked.start()
		w.unlock()
		select {
		case b = <-w.pool:
		case <-ctx.Done():
		}
		w.lock()
		w.blocked.stop()
		if b == nil {
			return nil, ctx.Err()
		}
	}
	if b.data == nil {
		b.data = make([]byte, 0, w.cfg.BufferSize)
	}
	b.kind, b.size = KindData, 0
	return b, nil
}

// finish sends sp's current buffer.
func (w *Writer) finish(sp *subpartition) {
	b := sp.cur
	abi.SetCount(b.data, sp.n)
	sp.cur, sp.n = nil, 0
	w.send(sp, b)
}

// send hands b to sp's channel: sent at once against credit, or backlogged.
func (w *Writer) send(sp *subpartition, b *Buffer) {
	if b.kind != KindEvent {
		w.buffers.Add(1)
		w.bytes.Add(int64(len(b.data)))
	}
	if sp.ch.gate == nil {
		panic("exchange: a writer sent before NewGate took its channel")
	}
	b.ch = sp.ch
	sp.ch.gate.push(sp.ch, b)
}

// Stats samples the writer's counters; any goroutine may call it.
func (w *Writer) Stats() WriterStats {
	size := cap(w.pool)
	return WriterStats{
		BackpressuredNanos: w.blocked.nanos(),
		BuffersSent:        w.buffers.Load(),
		BytesSent:          w.bytes.Load(),
		OutPoolUsage:       float64(size-len(w.pool)) / float64(size),
	}
}
