package exchange

import (
	"sync"
	"time"
)

// epoch anchors now on the monotonic clock.
var epoch = time.Now()

func now() int64 { return int64(time.Since(epoch)) }

// waitClock accumulates the time a goroutine spends waiting, including a wait
// in progress, so that a long wait shows in samples taken during it. It is
// touched only when a wait starts or ends, never per record.
type waitClock struct {
	mu      sync.Mutex
	total   int64
	since   int64
	waiting bool
}

func (c *waitClock) start() {
	c.mu.Lock()
	c.since, c.waiting = now(), true
	c.mu.Unlock()
}

func (c *waitClock) stop() {
	c.mu.Lock()
	c.total += now() - c.since
	c.waiting = false
	c.mu.Unlock()
}

// nanos is the total waited so far.
func (c *waitClock) nanos() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.waiting {
		return c.total + now() - c.since
	}
	return c.total
}
