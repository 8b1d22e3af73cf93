package exec

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"wasmstream.io/platform/runtime/exchange"
	"wasmstream.io/platform/runtime/exchange/netx"
	"wasmstream.io/platform/runtime/plan"
)

// taskNet is a task's part in a run spread over workers: the network ends
// of its channels whose other end runs elsewhere, or, for a subtask another
// worker runs, the leader's stand-in for it.
type taskNet struct {
	sender   *netx.Sender
	receiver *netx.Receiver
	// remote makes the task the leader's stand-in for a subtask that runs
	// on another worker (remote_leader.go).
	remote *remoteTask
	// ok: the task ended after all its input, so its sender waits for the
	// end of partition to be published and its receivers to confirm it
	// before it closes, within ShutdownGrace or until runCtx, the run's
	// context, ends (the run torn down).
	ok     bool
	runCtx context.Context

	// overtaken are the frames unaligned barriers overtook in the gate's
	// channels fed from other workers, by barrier id: the consumer's
	// in-flight input of those channels. The gate holds at most its
	// exclusive and floating buffers, which bounds them.
	mu        sync.Mutex
	overtaken map[int64][]overtakenFrame
}

// overtakenFrame is a frame an unaligned barrier overtook on a channel.
type overtakenFrame struct {
	channel int
	frame   []byte
}

// keepOvertaken is the receiver's Config.Overtaken: it copies the frame.
func (n *taskNet) keepOvertaken(channel int, ev exchange.Event, frame []byte) {
	b, ok := ev.(exchange.Barrier)
	if !ok {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.overtaken == nil {
		n.overtaken = map[int64][]overtakenFrame{}
	}
	n.overtaken[b.ID] = append(n.overtaken[b.ID], overtakenFrame{channel, append([]byte(nil), frame...)})
}

// takeOvertaken hands the frames barrier id overtook on channel (every
// channel when channel < 0) to add, and forgets those of earlier barriers.
func (n *taskNet) takeOvertaken(id int64, channel int, add func(channel int, frame []byte)) {
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.overtaken == nil {
		return
	}
	for bid := range n.overtaken {
		if bid < id {
			delete(n.overtaken, bid)
		}
	}
	frames := n.overtaken[id]
	kept := frames[:0]
	for _, f := range frames {
		if channel < 0 || f.channel == channel {
			add(f.channel, f.frame)
			continue
		}
		kept = append(kept, f)
	}
	n.overtaken[id] = kept
}

// close stops the task's network ends: a sender of a task that ended well
// first publishes what its writers sent, up to the end of partition, and
// waits for its receivers to confirm the end.
func (n *taskNet) close() error {
	var errs []error
	if n.sender != nil {
		run := n.runCtx
		if run == nil {
			// Closed without having run.
			run = context.Background()
		}
		ctx, cancel := context.WithTimeout(run, ShutdownGrace)
		if !n.ok {
			cancel()
		}
		errs = append(errs, n.sender.Close(ctx))
		cancel()
	}
	if n.receiver != nil {
		errs = append(errs, n.receiver.Close())
	}
	return errors.Join(errs...)
}

// chainHead is the head of the chain vertex v runs in: the task's name.
func chainHead(v *plan.Vertex) *plan.Vertex {
	for len(v.In) == 1 && v.In[0].Chained() {
		v = v.In[0].From
	}
	return v
}

// taskNames are the names of every subtask of the job.
func (j *Job) taskNames() []string {
	var names []string
	for _, v := range j.Plan.Vertices {
		if chainHead(v) != v {
			continue
		}
		for i := 0; i < v.Parallelism; i++ {
			names = append(names, v.ID+"["+strconv.Itoa(i)+"]")
		}
	}
	return names
}

// place decides, as a run's build starts, where its subtasks run: on the
// leader, by asking the job's Placer (and opening the link to the other
// workers when some run elsewhere); on another worker, from the placement
// RunPart was given.
func (b *builder) place(ctx context.Context, restore *RestoreSet) error {
	j := b.j
	if j.part != nil {
		b.pl, b.netFailed = j.part, j.partFail
		return nil
	}
	if j.Place == nil {
		return nil
	}
	var (
		restoreJob string
		restoreID  int64
	)
	if restore != nil {
		restoreJob, restoreID = restore.meta.Job, restore.meta.ID
	}
	pl, err := j.Place(ctx, restoreJob, restoreID, j.taskNames())
	if err != nil {
		return fmt.Errorf("place the subtasks: %w", err)
	}
	if pl == nil || !pl.spans() {
		return nil
	}
	link, err := newLeaderLink(ctx, j, pl, b.run)
	if err != nil {
		return err
	}
	b.pl, b.leader, b.netFailed = pl, link, link.fail
	if b.run != nil {
		b.run.leader = link
	}
	return nil
}

// here says whether this worker builds subtask i of the chain headed by v.
func (b *builder) here(v *plan.Vertex, i int) bool { return b.pl == nil || b.pl.here(v.ID, i) }

// connect gives the channels between this worker's subtasks and other
// workers' to the network exchange: each task's channels to consumers
// elsewhere to one sender, its gate's channels from producers elsewhere to
// one receiver. It runs once every task is built, before any runs.
func (b *builder) connect(tasks []*Task) error {
	if b.pl == nil {
		return nil
	}
	byName := map[string]*Task{}
	for _, t := range tasks {
		if t.net == nil || t.net.remote == nil {
			byName[taskID(t)] = t
		}
	}
	sends := map[*Task][]netx.Link{}
	recvs := map[*Task][]netx.Link{}
	job := b.j.Plan.Job
	for n, e := range b.edgeOrder {
		from, to := chainHead(e.From), e.To
		edge := b.edges[e]
		for c := 0; c < to.Parallelism; c++ {
			chans := edge.Channels(c)
			for p := range chans {
				here, there := b.here(from, p), b.here(to, c)
				if here == there {
					continue
				}
				addr := netx.Address{Job: b.j.ID, Run: b.pl.Run, Edge: "e" + strconv.Itoa(n), From: p, To: c}
				if here {
					t := byName[from.ID+"["+strconv.Itoa(p)+"]"]
					sends[t] = append(sends[t], netx.Link{Address: addr, Channel: chans[p]})
				} else {
					t := byName[to.ID+"["+strconv.Itoa(c)+"]"]
					recvs[t] = append(recvs[t], netx.Link{Address: addr, Channel: chans[p]})
				}
			}
		}
	}
	nc := b.j.Env.JetStream.Conn()
	xcfg := b.j.Env.Budgets.exchange(exchange.Config{BufferTimeout: job.BufferTimeout.Duration})
	for t, links := range sends {
		if t.net == nil {
			t.net = &taskNet{}
		}
		s, err := netx.NewSender(nc, netx.Config{Exchange: xcfg, Failed: b.netFailed}, links...)
		if err != nil {
			return fmt.Errorf("task %s: %w", taskID(t), err)
		}
		t.net.sender = s
	}
	for t, links := range recvs {
		if t.net == nil {
			t.net = &taskNet{}
		}
		r, err := netx.NewReceiver(nc, netx.Config{Exchange: xcfg, Failed: b.netFailed, Overtaken: t.net.keepOvertaken}, links...)
		if err != nil {
			return fmt.Errorf("task %s: %w", taskID(t), err)
		}
		t.net.receiver = r
	}
	return nil
}
