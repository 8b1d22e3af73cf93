package exchange

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"wasmstream.io/platform/abi"
)

// announcements records an inbox's announcements as "credits/released".
type announcements []string

func (a *announcements) announce(credits, released int) {
	*a = append(*a, fmt.Sprintf("%d/%d", credits, released))
}

func (a *announcements) take() string {
	s := strings.Join(*a, " ")
	*a = nil
	return s
}

// dataParcel is a parcel of one record of value v.
func dataParcel(v string, backlog int) Parcel {
	frame := abi.AppendRecord(abi.AppendInputHeader(nil, 1), &abi.Record{Value: []byte(v)})
	return Parcel{Kind: KindData, Data: frame, Backlog: backlog}
}

// TestInboxCredits: an inbox grants its exclusive credits at once, a
// floating buffer to a channel whose sender reports more backlog than its
// credits, the largest backlog first, and announces every recycled buffer
// with the credit it frees.
func TestInboxCredits(t *testing.T) {
	cfg := Config{ExclusivePerChannel: 1, FloatingPerGate: 1}
	e := NewEdge(cfg, 2, 1)
	g := NewGate(cfg, e.Channels(0))
	var a0, a1 announcements
	in0, in1 := NewInbox(e.Channels(0)[0], a0.announce), NewInbox(e.Channels(0)[1], a1.announce)
	receive := func(in *Inbox, p Parcel) {
		t.Helper()
		if err := in.Receive(p, nil); err != nil {
			t.Fatal(err)
		}
	}
	// next is the next buffer the consumer takes.
	var taken []*Buffer
	next := func() *Buffer {
		t.Helper()
		taken = append(taken, available(t, g)...)
		if len(taken) == 0 {
			t.Fatal("no buffer ready")
		}
		b := taken[0]
		taken = taken[1:]
		return b
	}
	steps := []struct {
		name   string
		do     func()
		a0, a1 string
	}{
		{"exclusive credits", func() {}, "1/0", "1/0"},
		// The exclusive credit is used and the sender has 3 more: the
		// floating buffer goes to channel 0.
		{"backlog", func() { receive(in0, dataParcel("a", 3)) }, "1/0", ""},
		// Channel 1 wants more than it has too, but nothing is free.
		{"second backlog", func() { receive(in1, dataParcel("b", 5)) }, "", ""},
		// Recycling channel 0's buffer frees its exclusive credit.
		{"recycle exclusive", func() { next().Recycle() }, "1/1", ""},
		{"recycle other", func() { next().Recycle() }, "", "1/1"},
		// The next buffer of channel 0 uses the floating buffer first;
		// once recycled, it goes to channel 1, the larger backlog.
		{"floating used", func() { receive(in0, dataParcel("c", 2)) }, "", ""},
		{"floating returned", func() { next().Recycle() }, "0/1", "1/0"},
		// An event takes no credit and is released when recycled.
		{"event", func() { receive(in0, Parcel{Kind: KindEvent, Event: Watermark{Time: 1}, Backlog: 2}); next().Recycle() }, "0/1", ""},
	}
	for _, s := range steps {
		s.do()
		if got0, got1 := a0.take(), a1.take(); got0 != s.a0 || got1 != s.a1 {
			t.Fatalf("%s: announced %q and %q, want %q and %q", s.name, got0, got1, s.a0, s.a1)
		}
	}
	if s := g.Stats(); s.ExclusiveInUse != 0 || s.FloatingInUse != 0 || s.Queued != 0 {
		t.Fatalf("gate stats %+v, want nothing in use", s)
	}
}

// TestInboxEndReturnsFloating: floating buffers granted to a channel that
// ends unused go back to the gate, to the next channel that needs them.
func TestInboxEndReturnsFloating(t *testing.T) {
	cfg := Config{ExclusivePerChannel: 1, FloatingPerGate: 2}
	e := NewEdge(cfg, 2, 1)
	NewGate(cfg, e.Channels(0))
	var a0, a1 announcements
	in0, in1 := NewInbox(e.Channels(0)[0], a0.announce), NewInbox(e.Channels(0)[1], a1.announce)
	if err := in0.Receive(Parcel{Kind: KindBacklog, Backlog: 3}, nil); err != nil {
		t.Fatal(err)
	}
	if err := in1.Receive(Parcel{Kind: KindBacklog, Backlog: 3}, nil); err != nil {
		t.Fatal(err)
	}
	if got0, got1 := a0.take(), a1.take(); got0 != "1/0 2/0" || got1 != "1/0" {
		t.Fatalf("announced %q and %q, want the floating buffers for channel 0", got0, got1)
	}
	if err := in0.Receive(Parcel{Kind: KindEvent, Event: EndOfPartition{}}, nil); err != nil {
		t.Fatal(err)
	}
	if got := a1.take(); got != "2/0" {
		t.Fatalf("channel 1 was announced %q after channel 0 ended, want 2/0", got)
	}
}

func TestInboxRefuses(t *testing.T) {
	for _, tc := range []struct {
		name   string
		before []Parcel
		p      Parcel
	}{
		{"data without credit", []Parcel{dataParcel("a", 0)}, dataParcel("b", 0)},
		{"after the end", []Parcel{{Kind: KindEvent, Event: EndOfPartition{}}}, Parcel{Kind: KindEvent, Event: Watermark{}}},
		{"unknown kind", nil, Parcel{Kind: KindBacklog + 1}},
		{"event without event", nil, Parcel{Kind: KindEvent}},
		{"negative backlog", nil, Parcel{Kind: KindBacklog, Backlog: -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{ExclusivePerChannel: 1}
			e := NewEdge(cfg, 1, 1)
			NewGate(cfg, e.Channels(0))
			g := e.Channels(0)[0].gate
			g.freeFloating = 0
			in := NewInbox(e.Channels(0)[0], func(int, int) {})
			for _, p := range tc.before {
				if err := in.Receive(p, nil); err != nil {
					t.Fatal(err)
				}
			}
			if err := in.Receive(tc.p, nil); !errors.Is(err, ErrProtocol) {
				t.Fatalf("Receive = %v, want ErrProtocol", err)
			}
		})
	}
}

// TestInboxFail: a failed inbox fails its gate, whatever is queued.
func TestInboxFail(t *testing.T) {
	e := NewEdge(Config{}, 2, 1)
	g := NewGate(Config{}, e.Channels(0))
	in := NewInbox(e.Channels(0)[0], func(int, int) {})
	emitValue(t, e.Writer(1), 0, "queued")
	failure := errors.New("lost")
	in.Fail(failure)
	in.Fail(errors.New("second"))
	if _, err := g.Next(cancelled); err != failure {
		t.Fatalf("Next = %v, want the first failure", err)
	}
	if err := in.Receive(dataParcel("a", 0), nil); err != failure {
		t.Fatalf("Receive = %v, want the failure", err)
	}
}

// TestRemoteOvertake: an overtaking barrier overtakes on both sides, what
// the outbox has not sent and what the gate has not delivered, and the two
// parts together are what it overtakes in-process.
func TestRemoteOvertake(t *testing.T) {
	// One record per buffer, two credits, no floating buffers.
	cfg := Config{BufferSize: 40, ExclusivePerChannel: 2, BuffersPerWriter: 4, BufferTimeout: -1}
	out, in := NewEdge(cfg, 1, 1), NewEdge(cfg, 1, 1)
	g := NewGate(cfg, in.Channels(0))
	g.floating, g.freeFloating = 0, 0
	var notes announcements
	inbox := NewInbox(in.Channels(0)[0], notes.announce)
	ob := NewOutbox(out.Channels(0)[0])
	apply := func() {
		for _, n := range notes {
			var credits, released int
			fmt.Sscanf(n, "%d/%d", &credits, &released)
			ob.Credit(0, credits)
			ob.Release(0, released)
		}
		notes = nil
	}
	var savedIn []string
	carry := func() {
		for {
			_, p, err := ob.Next(cancelled)
			if err != nil {
				return
			}
			p.Data = append([]byte(nil), p.Data...)
			if err := inbox.Receive(p, saver(t, &savedIn)); err != nil {
				t.Fatal(err)
			}
		}
	}
	apply()
	ob.Open(0)
	w := out.Writer(0)
	for _, v := range []string{"aaaa", "bbbb", "cccc", "dddd"} {
		emitValue(t, w, 0, v)
	}
	carry()
	held, err := g.Next(cancelled)
	if err != nil {
		t.Fatal(err)
	}
	var savedOut []string
	n, err := w.OvertakeEvent(testBarrier, saver(t, &savedOut))
	if err != nil {
		t.Fatal(err)
	}
	carry()
	if got := strings.Join(savedOut, " "); got != "0:cccc 0:dddd" || n != 2*(4+24) {
		t.Fatalf("the outbox overtook %q (%d bytes), want what it had not sent", got, n)
	}
	if got := strings.Join(savedIn, " "); got != "0:bbbb" {
		t.Fatalf("the gate overtook %q, want what it had not delivered", got)
	}
	got := []string{describeBuffer(held)}
	held.Recycle()
	for range 4 {
		got = append(got, availableDescribed(t, g)...)
		apply()
		carry()
	}
	if want := "0:aaaa 0:event barrier 7 0:bbbb 0:cccc 0:dddd"; strings.Join(got, " ") != want {
		t.Fatalf("delivered %q, want %q", got, want)
	}
}

// TestOutboxAnnouncesBacklog: a channel without credit announces its
// backlog before sending, and sends nothing before Open.
func TestOutboxAnnouncesBacklog(t *testing.T) {
	cfg := Config{BufferSize: 40, BufferTimeout: -1}
	e := NewEdge(cfg, 1, 1)
	ob := NewOutbox(e.Channels(0)[0])
	w := e.Writer(0)
	emitValue(t, w, 0, "aaaa")
	emitValue(t, w, 0, "bbbb")
	w.Flush()
	if _, p, err := ob.Next(cancelled); err == nil {
		t.Fatalf("Next before Open = %+v", p)
	}
	ob.Open(0)
	if _, p, err := ob.Next(cancelled); err != nil || p.Kind != KindBacklog || p.Backlog != 2 {
		t.Fatalf("Next = %+v, %v; want a backlog of 2", p, err)
	}
	if _, p, err := ob.Next(cancelled); err == nil {
		t.Fatalf("Next without credit = %+v", p)
	}
	ob.Credit(0, 1)
	if _, p, err := ob.Next(cancelled); err != nil || p.Kind != KindData || p.Backlog != 1 || frameValues(t, p.Data) != "aaaa" {
		t.Fatalf("Next = %+v, %v; want aaaa with a backlog of 1", p, err)
	}
	if s := w.Stats(); s.OutPoolUsage == 0 {
		t.Fatal("a buffer in flight is back in the pool")
	}
	if n := ob.Release(0, 2); n != 1 {
		t.Fatalf("Release(2) released %d, want the 1 in flight", n)
	}
}
