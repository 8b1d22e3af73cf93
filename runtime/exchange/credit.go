package exchange

// Credit-based flow control of a gate's channels. Every function here runs
// with the gate's mutex held.

// push appends b to c's queue from the sender's side and sends what credit
// allows.
func (g *Gate) push(c *InputChannel, b *Buffer) {
	g.mu.Lock()
	if c.inbox != nil {
		g.mu.Unlock()
		panic("exchange: a writer sent on a channel an inbox feeds")
	}
	if c.tail == nil {
		c.head = b
	} else {
		c.tail.next = b
	}
	c.tail = b
	if c.backlogHead == nil {
		c.backlogHead = b
	}
	if b.kind != KindEvent {
		c.backlog++
	}
	g.deliver(c)
	g.mu.Unlock()
}

// deliver sends c's backlog in order while it can: an event needs no credit,
// a data buffer takes one of c's exclusive credits, else a free floating
// buffer. A channel left waiting for credit is stalled; an outbox's stalled
// channel announces its backlog.
func (g *Gate) deliver(c *InputChannel) {
	for b := c.backlogHead; b != nil; b = c.backlogHead {
		if b.kind != KindEvent {
			switch {
			case c.credits > 0:
				c.credits--
				b.floating = false
				g.exclusiveInUse++
			case g.freeFloating > 0:
				g.freeFloating--
				b.floating = true
				g.floatingInUse++
			default:
				if !c.stalled {
					c.stalled = true
					g.stalled++
				}
				if g.outbox {
					g.announceBacklog(c)
				}
				return
			}
			c.backlog--
		}
		c.backlogHead = b.next
		c.queued++
		g.queued++
		g.ready(c)
	}
	if c.stalled {
		c.stalled = false
		g.stalled--
	}
}

// recycled returns the credit of a buffer the consumer is done with. An
// inbox's channel announces the credit and the buffer's release to its
// sender.
func (g *Gate) recycled(b *Buffer) {
	g.mu.Lock()
	c, in := b.ch, b.ch.inbox
	switch {
	case b.kind == KindEvent:
		if in != nil {
			in.announce(0, 1)
		}
	case b.floating:
		g.floatingInUse--
		g.freeFloating++
		if in != nil {
			in.announce(0, 1)
		}
		g.grant()
	default:
		g.exclusiveInUse--
		c.credits++
		if in != nil {
			in.announce(1, 1)
			g.restall(c)
		} else {
			g.deliver(c)
		}
	}
	g.mu.Unlock()
}

// grant gives free floating buffers to stalled channels, the largest backlog
// first (the lowest index among equals): a local channel sends its backlog
// with them, an inbox's channel announces them to its sender.
func (g *Gate) grant() {
	for g.freeFloating > 0 && g.stalled > 0 {
		var top *InputChannel
		for _, c := range g.channels {
			if c.stalled && (top == nil || c.backlog > top.backlog) {
				top = c
			}
		}
		if top.inbox != nil {
			g.grantRemote(top)
		} else {
			g.deliver(top)
		}
	}
}

// ready puts c at the end of the ready ring unless it is there or blocked,
// and wakes a waiting Next.
func (g *Gate) ready(c *InputChannel) {
	if c.inReady || c.blocked {
		return
	}
	c.inReady = true
	g.ring[(g.ringHead+g.ringLen)%len(g.ring)] = c
	g.ringLen++
	g.wakeNext()
}

// pop takes the first sent buffer of the next ready channel, and puts the
// channel back at the end of the ring if it has more.
func (g *Gate) pop() *Buffer {
	for g.ringLen > 0 {
		c := g.ring[g.ringHead]
		g.ringHead = (g.ringHead + 1) % len(g.ring)
		g.ringLen--
		c.inReady = false
		if c.blocked {
			continue
		}
		b := c.head
		c.head = b.next
		if c.head == nil {
			c.tail = nil
		}
		b.next = nil
		c.queued--
		g.queued--
		if c.queued > 0 {
			g.ready(c)
		}
		return b
	}
	return nil
}
