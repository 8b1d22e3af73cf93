package exchange

import (
	"context"
	"fmt"
	"io"
	"sync"
)

// Gate is the receiving side of one consumer subtask over all its input
// edges. Next, Block and Unblock belong to the consumer's goroutine; Stats and
// Buffer.Recycle may be called from any goroutine.
type Gate struct {
	mu       sync.Mutex
	channels []*InputChannel
	// ring lists the channels with sent buffers, in the order Next serves
	// them; each appears at most once.
	ring     []*InputChannel
	ringHead int
	ringLen  int
	// waiting: Next waits on wake, which holds at most one token.
	waiting bool
	wake    chan struct{}
	// woken: Wakeup asked the next wait of Next to return ErrWoken.
	woken bool
	// exclusive and floating are the gate's credits; freeFloating are the
	// floating buffers not granted. While any channel is stalled,
	// freeFloating is 0.
	exclusive      int
	floating       int
	freeFloating   int
	exclusiveInUse int
	floatingInUse  int
	queued         int
	stalled        int
	// ended counts the EndOfPartition events Next returned; the consumer's
	// goroutine owns it.
	ended int
	idle  waitClock
	// err is the failure of a channel between processes (Inbox.Fail),
	// which Next returns from then on.
	err error
	// received pools the buffers of inboxes' channels; nil without them.
	received chan *Buffer
	// outbox: the gate is an Outbox's, whose channels' buffers a transport
	// sends; announcing counts its channels owing a backlog announcement.
	outbox     bool
	announcing int
}

// GateStats describe a gate's input buffers.
type GateStats struct {
	// IdleNanos is the total time Next spent waiting for a buffer.
	IdleNanos int64
	// InPoolUsage is the share of the gate's buffers (its channels'
	// exclusive credits and its floating buffers) held by sent data
	// buffers not yet recycled, 0..1.
	InPoolUsage float64
	// ExclusiveInUse and FloatingInUse split those buffers by kind.
	ExclusiveInUse int
	FloatingInUse  int
	// Queued counts the buffers (events included) sent and not yet
	// returned by Next.
	Queued int
}

// NewGate makes the gate of one consumer subtask over its channels of each
// input edge; a channel's index in the gate is its position in the
// concatenation. The gate grants cfg.FloatingPerGate floating buffers; each
// channel keeps its edge's exclusive credits. Gates must exist before their
// edges' writers send.
func NewGate(cfg Config, channels ...[]*InputChannel) *Gate {
	cfg = cfg.withDefaults(0)
	g := &Gate{wake: make(chan struct{}, 1), floating: cfg.FloatingPerGate, freeFloating: cfg.FloatingPerGate}
	for _, cs := range channels {
		for _, c := range cs {
			if c.gate != nil {
				panic(fmt.Sprintf("exchange: input channel already is channel %d of another gate", c.index))
			}
			c.gate, c.index = g, len(g.channels)
			g.channels = append(g.channels, c)
			g.exclusive += c.exclusive
		}
	}
	g.ring = make([]*InputChannel, len(g.channels))
	return g
}

// NumChannels is the number of input channels.
func (g *Gate) NumChannels() int { return len(g.channels) }

// Next returns the next buffer of any channel that has one, serving ready
// channels round robin, and skipping blocked channels. A record that spans
// buffers comes back as one buffer once all of it has arrived. Next waits
// while no buffer is ready; ctx is consulted only then. After every channel
// has delivered its EndOfPartition, Next returns io.EOF. After a channel
// between processes failed (Inbox.Fail), Next returns its error.
func (g *Gate) Next(ctx context.Context) (*Buffer, error) {
	for {
		g.mu.Lock()
		if g.err != nil {
			g.mu.Unlock()
			return nil, g.err
		}
		b := g.pop()
		if b == nil {
			if g.ended == len(g.channels) {
				g.mu.Unlock()
				return nil, io.EOF
			}
			if g.woken {
				g.woken = false
				g.mu.Unlock()
				return nil, ErrWoken
			}
			g.waiting = true
			g.mu.Unlock()
			if err := g.wait(ctx); err != nil {
				return nil, err
			}
			continue
		}
		g.mu.Unlock()
		switch b.kind {
		case KindData:
			_ = b.rd.Reset(b.data)
			return b, nil
		case KindEvent:
			if _, ok := b.event.(EndOfPartition); ok {
				g.ended++
			}
			return b, nil
		}
		if r := b.ch.assemble(b); r != nil {
			return r, nil
		}
	}
}

func (g *Gate) wait(ctx context.Context) error {
	g.idle.start()
	defer g.idle.stop()
	select {
	case <-g.wake:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Block makes Next skip channel: its sent buffers stay queued and hold their
// credits, so its sender soon stops. Checkpoint barrier alignment uses it.
func (g *Gate) Block(channel int) {
	g.mu.Lock()
	g.channels[channel].blocked = true
	g.mu.Unlock()
}

// Unblock lets Next serve channel again.
func (g *Gate) Unblock(channel int) {
	g.mu.Lock()
	c := g.channels[channel]
	c.blocked = false
	if c.queued > 0 {
		g.ready(c)
	}
	g.mu.Unlock()
}

// Stats samples the gate's counters.
func (g *Gate) Stats() GateStats {
	s := GateStats{IdleNanos: g.idle.nanos()}
	g.mu.Lock()
	s.ExclusiveInUse, s.FloatingInUse, s.Queued = g.exclusiveInUse, g.floatingInUse, g.queued
	g.mu.Unlock()
	if total := g.exclusive + g.floating; total > 0 {
		s.InPoolUsage = float64(s.ExclusiveInUse+s.FloatingInUse) / float64(total)
	}
	return s
}
