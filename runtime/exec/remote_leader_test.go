package exec

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"wasmstream.io/platform/checkpoint"
)

// progressCoordinator is a coordinator whose checkpoint in progress the
// test sets.
type progressCoordinator struct {
	mu   sync.Mutex
	b    checkpoint.Barrier
	busy bool
}

func (c *progressCoordinator) set(id int64, busy bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.b, c.busy = checkpoint.Barrier{ID: id, Kind: checkpoint.KindCheckpoint}, busy
}

func (c *progressCoordinator) InProgress() (checkpoint.Barrier, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.b, c.busy
}

func (*progressCoordinator) Ack(int64, string, map[string]checkpoint.Blob, time.Duration, int64) {}
func (*progressCoordinator) Decline(int64, string, checkpoint.FailureReason, error)              {}
func (*progressCoordinator) Finished(string, map[string][]byte)                                  {}
func (*progressCoordinator) Request()                                                            {}

// The leader repeats to the other workers the trigger of a checkpoint that
// stays in progress, so that a lost trigger does not leave the checkpoint
// to its timeout, and repeats nothing while none is, or while each look
// finds a new one.
func TestLeaderRepeatsTriggers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	nc, js := embeddedNATS(t)
	j := &Job{ID: "job1", Log: slog.New(slog.DiscardHandler), Env: &Env{JetStream: js}}
	pl := &Placement{Run: 3, Self: "a", Leader: "a"}
	ctl, _ := pl.subjects(j.ID)
	triggers := make(chan int64, 16)
	sub, err := nc.Subscribe(ctl, func(m *nats.Msg) {
		if rm, err := decodeRunMsg(m.Data); err == nil && rm.Op == opTrigger && rm.Barrier != nil {
			triggers <- rm.Barrier.ID
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	l, err := newLeaderLink(runCtx, j, pl, &checkpointRun{})
	if err != nil {
		t.Fatal(err)
	}
	coord := &progressCoordinator{}
	l.coord = coord
	expect := func(want int64) {
		t.Helper()
		if err := nc.Flush(); err != nil {
			t.Fatal(err)
		}
		select {
		case got := <-triggers:
			if got != want {
				t.Fatalf("trigger of checkpoint %d repeated, want %d", got, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("the trigger of checkpoint %d was not repeated", want)
		}
	}
	none := func() {
		t.Helper()
		if err := nc.Flush(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
		if len(triggers) > 0 {
			t.Fatalf("trigger of checkpoint %d repeated", <-triggers)
		}
	}
	// Looks: none in progress, then a new one at every look: nothing.
	last := l.repeatTrigger(0)
	for id := int64(1); id <= 3; id++ {
		coord.set(id, true)
		last = l.repeatTrigger(last)
		none()
	}
	// Checkpoint 3 still in progress at the next look: repeated, and at
	// every look after.
	last = l.repeatTrigger(last)
	expect(3)
	last = l.repeatTrigger(last)
	expect(3)
	coord.set(3, false)
	if last = l.repeatTrigger(last); last != 0 {
		t.Fatalf("look with none in progress returned %d", last)
	}
	none()

	// Running: a checkpoint that stays in progress has its trigger
	// repeated within two periods.
	coord.set(4, true)
	go l.repeatTriggers()
	expect(4)
	stop()
}
