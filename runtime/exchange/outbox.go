package exchange

import "context"

// Outbox holds writer channels whose consumers run in other processes, for
// a transport to send (remote.go). Next belongs to the transport's sending
// goroutine; the other methods may be called from any goroutine.
type Outbox struct {
	g *Gate
}

// NewOutbox takes channels, writers' channels that no gate has, for a
// transport to send; channel i of the outbox is channels[i]. They have no
// credit and send nothing until Open. Like NewGate, it must run before the
// writers send.
func NewOutbox(channels ...*InputChannel) *Outbox {
	g := &Gate{wake: make(chan struct{}, 1), outbox: true}
	for _, c := range channels {
		if c.gate != nil {
			panic("exchange: NewOutbox: the channel already is in a gate")
		}
		c.gate, c.index = g, len(g.channels)
		c.credits, c.blocked = 0, true
		g.channels = append(g.channels, c)
	}
	g.ring = make([]*InputChannel, len(g.channels))
	return &Outbox{g: g}
}

// NumChannels is the number of the outbox's channels.
func (o *Outbox) NumChannels() int { return len(o.g.channels) }

// Open lets channel send: its receiver is listening.
func (o *Outbox) Open(channel int) {
	g := o.g
	g.mu.Lock()
	c := g.channels[channel]
	if c.blocked {
		c.blocked = false
		if c.queued > 0 {
			g.ready(c)
		}
		if c.announce {
			g.wakeNext()
		}
	}
	g.mu.Unlock()
}

// Credit adds n credits, granted by the receiver, to channel, which sends
// its backlog against them.
func (o *Outbox) Credit(channel, n int) {
	g := o.g
	g.mu.Lock()
	c := g.channels[channel]
	c.credits += n
	g.deliver(c)
	g.mu.Unlock()
}

// Release returns the n buffers of channel sent longest ago to their
// writer's pool: the receiver recycled n of them. It returns how many it
// released, fewer only if fewer were in flight.
func (o *Outbox) Release(channel, n int) int {
	g := o.g
	g.mu.Lock()
	c := g.channels[channel]
	var list *Buffer
	done := 0
	for ; done < n && c.flightHead != nil; done++ {
		b := c.flightHead
		if c.flightHead = b.next; c.flightHead == nil {
			c.flightTail = nil
		}
		if b.kind != KindEvent {
			g.exclusiveInUse--
		}
		b.next, list = list, b
	}
	g.mu.Unlock()
	for b := list; b != nil; {
		next := b.next
		b.next, b.ch, b.event = nil, nil, nil
		b.data = b.data[:0]
		freed := b.freed
		b.pool <- b
		signal(freed)
		b = next
	}
	return done
}

// Next returns the next parcel to send and its channel: the next buffer an
// open channel may send, the channels served round robin, else a backlog
// announcement a stalled channel owes (a buffer carries the backlog too). A buffer sent is in flight
// until released, except an overtaking event, which holds no pool buffer.
// Next waits while there is nothing to send; ctx is consulted only then,
// and Wakeup interrupts the wait with ErrWoken.
func (o *Outbox) Next(ctx context.Context) (int, Parcel, error) {
	g := o.g
	for {
		g.mu.Lock()
		if b := g.pop(); b != nil {
			c := b.ch
			if c.announce {
				// The buffer carries the backlog.
				c.announce = false
				g.announcing--
			}
			if b.pool != nil {
				if c.flightTail == nil {
					c.flightHead = b
				} else {
					c.flightTail.next = b
				}
				c.flightTail = b
			}
			p := Parcel{Kind: b.kind, Event: b.event, RecordSize: b.size, Overtakes: b.overtakes, Backlog: c.backlog}
			if b.kind != KindEvent {
				p.Data = b.data
			}
			g.mu.Unlock()
			return c.index, p, nil
		}
		if g.announcing > 0 {
			for _, c := range g.channels {
				if c.announce && !c.blocked {
					c.announce = false
					g.announcing--
					p := Parcel{Kind: KindBacklog, Backlog: c.backlog}
					g.mu.Unlock()
					return c.index, p, nil
				}
			}
		}
		if g.woken {
			g.woken = false
			g.mu.Unlock()
			return 0, Parcel{}, ErrWoken
		}
		g.waiting = true
		g.mu.Unlock()
		if err := g.wait(ctx); err != nil {
			return 0, Parcel{}, err
		}
	}
}

// Wakeup makes Next return ErrWoken instead of waiting, as Gate.Wakeup.
func (o *Outbox) Wakeup() { o.g.Wakeup() }

// announceBacklog notes that c, stalled, owes its receiver its backlog.
func (g *Gate) announceBacklog(c *InputChannel) {
	if !c.announce {
		c.announce = true
		g.announcing++
	}
	if !c.blocked {
		g.wakeNext()
	}
}

// wakeNext wakes a waiting Next.
func (g *Gate) wakeNext() {
	if g.waiting {
		g.waiting = false
		select {
		case g.wake <- struct{}{}:
		default:
		}
	}
}
