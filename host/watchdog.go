package host

import "time"

// watchdog is a Guest's deadline keeper: one goroutine that wakes when the
// running call would reach the CallTimeout and, if the call is still
// running, sets the live instance's stop flag (see instrument.go), so a Call
// needs no timer or context of its own. The guest traps at its next slow
// path, within checkBudget loop iterations, and the Guest discards the
// instance.
//
// The flag is written from this goroutine while the guest runs on the
// Guest's. This is sound on the platforms wazero compiles for (amd64 and
// arm64; the host always uses the compiler): the flag lives in the
// instance's module context, a Go byte slice that compiled code reads
// through a pointer; wazero's compiler loads a global anew in every block
// with several predecessors, such as a loop head, and hoists no load out of
// a loop, so every slow path loads the flag from memory. The store changes
// one byte from 0 to 1, so the guest reads 0 or 1, never a torn value, and
// cache coherence makes the 1 visible to the next loads. The slow path also
// exits to Go, so this goroutine gets to run even while the garbage
// collector stops the world. On the Go side only this goroutine writes the
// flag, after the atomic handover of the instance (Guest.live and
// instance.start), and nothing reads it, so the race detector has nothing
// to report.
type watchdog struct {
	quit chan struct{}
	done chan struct{}
}

func startWatchdog(p *Guest) *watchdog {
	w := &watchdog{quit: make(chan struct{}), done: make(chan struct{})}
	go w.run(p)
	return w
}

func (w *watchdog) run(p *Guest) {
	defer close(w.done)
	t := time.NewTimer(p.timeout)
	defer t.Stop()
	for {
		select {
		case <-w.quit:
			return
		case <-t.C:
		}
		t.Reset(p.expire())
	}
}

// stop ends the goroutine and waits for it, so it touches no instance the
// Guest hands on afterwards.
func (w *watchdog) stop() {
	close(w.quit)
	<-w.done
}

// expire stops the live call if it has run for the CallTimeout and returns
// how long to sleep before looking again.
func (p *Guest) expire() time.Duration {
	inst := p.live.Load()
	if inst == nil {
		return p.timeout
	}
	started := inst.start.Load()
	if started <= 0 {
		return p.timeout
	}
	ran := time.Duration(p.module.host.now() - started)
	if ran < p.timeout {
		return p.timeout - ran
	}
	inst.interrupt(started)
	return p.timeout
}
