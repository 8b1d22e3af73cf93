package exchange

import "fmt"

// Inbox feeds an input channel of a gate from a transport, in place of a
// writer (remote.go). Receive belongs to the transport's receiving
// goroutine; Fail may be called from any goroutine.
type Inbox struct {
	c *InputChannel
	// announce tells the sender, with the gate's mutex held, of credits
	// granted and buffers released.
	announce func(credits, released int)
	// scratch joins the fragments an overtaking event overtakes.
	scratch []byte
}

// NewInbox makes c, a channel of a gate, fed by a transport instead of a
// writer; no writer may send on it. announce is called with the gate's
// mutex held whenever the channel's sender may send credits more data
// buffers, or released of its buffers were recycled; it must not block.
// Its first call, from NewInbox, grants the channel's exclusive credits.
func NewInbox(c *InputChannel, announce func(credits, released int)) *Inbox {
	g := c.gate
	if g == nil || g.outbox {
		panic("exchange: NewInbox: the channel is in no gate")
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if c.inbox != nil {
		panic(fmt.Sprintf("exchange: NewInbox: channel %d already has an inbox", c.index))
	}
	in := &Inbox{c: c, announce: announce}
	c.inbox = in
	if g.received == nil {
		// Room for every buffer the gate can hold at once; event buffers
		// beyond it are let go on recycling.
		g.received = make(chan *Buffer, g.exclusive+g.floating)
	}
	announce(c.credits, 0)
	return in
}

// Receive puts the next parcel of the channel, as its sender sent it, into
// the channel. A data buffer joins the queue against a credit the inbox
// granted, using a floating buffer granted to it first; an event needs no
// credit; an overtaking event goes to the head of the queue, behind only
// the rest of a record the consumer is reassembling, and save gets the
// frames it overtakes, as Writer.OvertakeEvent's save does (the channel is
// the channel's index in the gate; save runs with the gate's mutex held and
// must copy what it keeps; nil drops them). Every parcel's Backlog tells the gate whether
// the channel could use floating buffers. Receive keeps p.Data. It returns
// an error wrapping ErrProtocol for a parcel the sender had no right to
// send, and the gate's failure once it failed.
func (in *Inbox) Receive(p Parcel, save func(channel int, frame []byte)) error {
	c := in.c
	g := c.gate
	if p.Kind == KindEvent && p.Overtakes {
		if err := in.check(p); err != nil {
			return err
		}
		if save == nil {
			save = discardFrame
		}
		_, in.scratch = g.overtake(c, &Buffer{kind: KindEvent, event: p.Event, overtakes: true}, c.index, save, in.scratch)
		return in.backlog(p.Backlog, false)
	}
	g.mu.Lock()
	if err := in.checkLocked(p); err != nil {
		g.mu.Unlock()
		return err
	}
	if p.Kind != KindBacklog {
		b := g.receivedBuffer()
		b.kind, b.data, b.event, b.size, b.ch = p.Kind, p.Data, p.Event, p.RecordSize, c
		if b.kind != KindEvent {
			switch {
			case c.granted > 0:
				c.granted--
				b.floating = true
				g.floatingInUse++
			case c.credits > 0:
				c.credits--
				b.floating = false
				g.exclusiveInUse++
			default:
				g.mu.Unlock()
				return fmt.Errorf("%w: channel %d: a data buffer arrived without credit", ErrProtocol, c.index)
			}
		}
		if c.tail == nil {
			c.head = b
		} else {
			c.tail.next = b
		}
		c.tail = b
		c.queued++
		g.queued++
		g.ready(c)
	}
	_, end := p.Event.(EndOfPartition)
	g.mu.Unlock()
	return in.backlog(p.Backlog, end)
}

// discardFrame is the save of a Receive given none.
func discardFrame(int, []byte) {}

// check is checkLocked under the gate's mutex.
func (in *Inbox) check(p Parcel) error {
	g := in.c.gate
	g.mu.Lock()
	defer g.mu.Unlock()
	return in.checkLocked(p)
}

// checkLocked refuses a parcel after a failure, after the channel's end,
// and of an unknown kind.
func (in *Inbox) checkLocked(p Parcel) error {
	c := in.c
	switch {
	case c.gate.err != nil:
		return c.gate.err
	case c.ended:
		return fmt.Errorf("%w: channel %d: a parcel arrived after its end of partition", ErrProtocol, c.index)
	case p.Kind > KindBacklog:
		return fmt.Errorf("%w: channel %d: parcel of unknown kind %d", ErrProtocol, c.index, p.Kind)
	case p.Kind == KindEvent && p.Event == nil:
		return fmt.Errorf("%w: channel %d: an event parcel without an event", ErrProtocol, c.index)
	case p.Backlog < 0:
		return fmt.Errorf("%w: channel %d: backlog %d", ErrProtocol, c.index, p.Backlog)
	}
	return nil
}

// backlog records the sender's backlog, granting floating buffers if the
// channel has fewer credits than that. At the channel's end (end), the
// floating buffers granted to it and not used go back to the gate.
func (in *Inbox) backlog(n int, end bool) error {
	c := in.c
	g := c.gate
	g.mu.Lock()
	defer g.mu.Unlock()
	c.backlog = n
	if end {
		c.ended, c.backlog = true, 0
		g.freeFloating += c.granted
		c.granted = 0
		g.restall(c)
		g.grant()
		return nil
	}
	g.restall(c)
	return nil
}

// Fail fails the gate: Next returns err from now on (after the buffers it
// is reassembling, none), and Receive returns it too. Only the first
// failure counts.
func (in *Inbox) Fail(err error) {
	g := in.c.gate
	g.mu.Lock()
	if g.err == nil {
		g.err = err
		g.wakeNext()
	}
	g.mu.Unlock()
}

// receivedBuffer takes a buffer of the gate's pool of received buffers.
func (g *Gate) receivedBuffer() *Buffer {
	select {
	case b := <-g.received:
		return b
	default:
		return &Buffer{pool: g.received}
	}
}

// restall sets whether c, fed by an inbox, is stalled: its sender reported
// more data buffers waiting than the credits and floating buffers it holds.
// A stalled channel is granted free floating buffers.
func (g *Gate) restall(c *InputChannel) {
	stalled := c.backlog > c.credits+c.granted
	if stalled != c.stalled {
		c.stalled = stalled
		if stalled {
			g.stalled++
		} else {
			g.stalled--
		}
	}
	if stalled {
		g.grant()
	}
}

// grantRemote grants c, fed by an inbox and stalled, the free floating
// buffers it needs, as many as there are, and announces them.
func (g *Gate) grantRemote(c *InputChannel) {
	n := min(g.freeFloating, c.backlog-c.credits-c.granted)
	g.freeFloating -= n
	c.granted += n
	c.inbox.announce(n, 0)
	if c.backlog <= c.credits+c.granted {
		c.stalled = false
		g.stalled--
	}
}
