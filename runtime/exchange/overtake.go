package exchange

import "wasmstream.io/platform/abi"

// OvertakeEvent sends ev on every channel ahead of the data its consumer has
// not taken yet, as an unaligned checkpoint barrier must travel: each
// channel's partial buffer is sent first, then ev goes to the head of the
// channel's queue, behind only the rest of a record whose first fragment the
// consumer already took. The buffers ev overtakes (sent or backlogged) stay
// queued and are delivered after it; save gets their records, channel by
// channel in queue order, each buffer (or each spanning record, joined) as
// an abi input frame, so that the caller can persist them with the
// checkpoint. save runs with the gate's mutex held: it must copy what it
// keeps and must not block. ev takes no buffer of the pool, so OvertakeEvent
// never waits, even under backpressure. It returns the bytes overtaken.
func (w *Writer) OvertakeEvent(ev Event, save func(channel int, frame []byte)) (int64, error) {
	w.lock()
	defer w.unlock()
	if w.err != nil {
		return 0, w.err
	}
	var (
		total   int64
		scratch []byte
	)
	for i := range w.subs {
		sp := &w.subs[i]
		if sp.cur != nil {
			w.finish(sp)
		}
		var n int64
		n, scratch = sp.ch.gate.overtake(sp.ch, &Buffer{kind: KindEvent, event: ev, overtakes: true}, i, save, scratch)
		total += n
	}
	return total, nil
}

// continuesRecord says whether b is a fragment after the first of its record.
func continuesRecord(b *Buffer) bool {
	return (b.kind == KindFragment || b.kind == KindLastFragment) && b.size == 0
}

// overtake links event buffer ev into c's queue ahead of every buffer the
// consumer could otherwise take first, and passes the data buffers behind it
// to save as frames (joining a spanning record's fragments in scratch, which
// it returns for reuse). ev needs no credit: it is sent at once unless a
// fragment it must follow is still in the backlog, and then it is sent in
// order with it.
func (g *Gate) overtake(c *InputChannel, ev *Buffer, channel int, save func(int, []byte), scratch []byte) (int64, []byte) {
	g.mu.Lock()
	defer g.mu.Unlock()
	ev.ch = c
	var prev *Buffer
	cur, sent := c.head, true
	for cur != nil && continuesRecord(cur) {
		if cur == c.backlogHead {
			sent = false
		}
		prev, cur = cur, cur.next
	}
	ev.next = cur
	if prev == nil {
		c.head = ev
	} else {
		prev.next = ev
	}
	if cur == nil {
		c.tail = ev
	}
	if sent {
		c.queued++
		g.queued++
		g.ready(c)
	}
	var n int64
	for b := cur; b != nil; b = b.next {
		switch b.kind {
		case KindData:
			n += int64(len(b.data))
			save(channel, b.data)
		case KindFragment, KindLastFragment:
			if b.size > 0 {
				scratch = abi.AppendInputHeader(scratch[:0], 1)
			}
			scratch = append(scratch, b.data...)
			if b.kind == KindLastFragment {
				n += int64(len(scratch))
				save(channel, scratch)
			}
		}
	}
	return n, scratch
}
