package host

import (
	"runtime/debug"
	"sync/atomic"
	"time"
)

// trimInterval is the least time between two trims.
const trimInterval = time.Second

// trimmer returns the heap that closed instances freed to the OS, from a
// goroutine the Host owns, at most once per trimInterval: a request while
// it waits is served once the interval has passed, and requests in between
// are merged. The garbage collector alone would keep freed heap for
// minutes, so a failed job's memory would stay with the process.
type trimmer struct {
	wake  chan struct{}
	quit  chan struct{}
	done  chan struct{}
	every time.Duration
	// trims counts the trims done.
	trims atomic.Int64
}

func startTrimmer(every time.Duration) *trimmer {
	t := &trimmer{wake: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{}), every: every}
	go t.run()
	return t
}

func (t *trimmer) run() {
	defer close(t.done)
	pause := time.NewTimer(t.every)
	pause.Stop()
	for {
		select {
		case <-t.quit:
			return
		case <-t.wake:
		}
		debug.FreeOSMemory()
		t.trims.Add(1)
		pause.Reset(t.every)
		select {
		case <-t.quit:
			pause.Stop()
			return
		case <-pause.C:
		}
	}
}

// request asks for a trim; it never blocks.
func (t *trimmer) request() {
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// stop ends the goroutine.
func (t *trimmer) stop() {
	close(t.quit)
	<-t.done
}
