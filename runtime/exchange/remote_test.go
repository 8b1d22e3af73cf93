package exchange

import (
	"context"
	"errors"
	"sync"
	"testing"
)

// pipe carries the channels of one outbox to their inboxes as a transport
// would, inside one process: a goroutine takes each parcel from the outbox
// and hands a copy of it to its inbox; another applies the inboxes'
// announcements to the outbox.
type pipe struct {
	out *Outbox
	ins []*Inbox
	// save gets what overtaking events overtake in the gates.
	save func(channel int, frame []byte)
	mu   sync.Mutex
	// notes are the announcements not applied yet; opened says which
	// channels got their first.
	notes  []note
	opened []bool
	wake   chan struct{}
}

type note struct{ channel, credits, released int }

// announcer is channel's announce callback for NewInbox: it queues and
// never blocks.
func (p *pipe) announcer(channel int) func(credits, released int) {
	return func(credits, released int) {
		p.mu.Lock()
		p.notes = append(p.notes, note{channel, credits, released})
		p.mu.Unlock()
		select {
		case p.wake <- struct{}{}:
		default:
		}
	}
}

// pipeEdge joins writers' edge out to gates' edge in, whose gates exist: an
// outbox per producer over its channels of out, an inbox per channel of
// in. It returns a function that stops the pipes' goroutines.
func pipeEdge(t *testing.T, out, in *Edge, producers, consumers int, save func(int, []byte)) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for prod := range producers {
		chans := make([]*InputChannel, consumers)
		for c := range chans {
			chans[c] = out.Channels(c)[prod]
		}
		p := &pipe{out: NewOutbox(chans...), save: save, opened: make([]bool, consumers), wake: make(chan struct{}, 1)}
		for c := range consumers {
			p.ins = append(p.ins, NewInbox(in.Channels(c)[prod], p.announcer(c)))
		}
		wg.Go(func() { p.control(ctx) })
		wg.Go(func() { p.carry(t, ctx) })
	}
	return func() {
		cancel()
		wg.Wait()
	}
}

// carry moves parcels until ctx ends.
func (p *pipe) carry(t *testing.T, ctx context.Context) {
	for {
		ch, parcel, err := p.out.Next(ctx)
		if err != nil {
			if !errors.Is(err, context.Canceled) {
				t.Errorf("Outbox.Next: %v", err)
			}
			return
		}
		parcel.Data = append([]byte(nil), parcel.Data...)
		if err := p.ins[ch].Receive(parcel, p.save); err != nil {
			t.Errorf("Inbox.Receive: %v", err)
			return
		}
	}
}

// control applies announcements until ctx ends.
func (p *pipe) control(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.wake:
		}
		p.mu.Lock()
		notes := p.notes
		p.notes = nil
		p.mu.Unlock()
		for _, n := range notes {
			p.out.Credit(n.channel, n.credits)
			if got := p.out.Release(n.channel, n.released); got != n.released {
				panic("released more buffers than in flight")
			}
			if !p.opened[n.channel] {
				p.opened[n.channel] = true
				p.out.Open(n.channel)
			}
		}
	}
}
