package host

import "time"

// watchdog is a Pool's deadline keeper: one goroutine that wakes when the
// running call would reach the CallTimeout and cancels the live instance's
// context if the call is still running, so a Call needs no timer or context
// of its own. wazero then stops the guest and closes its module.
type watchdog struct {
	quit chan struct{}
	done chan struct{}
}

func startWatchdog(p *Pool) *watchdog {
	w := &watchdog{quit: make(chan struct{}), done: make(chan struct{})}
	go w.run(p)
	return w
}

func (w *watchdog) run(p *Pool) {
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
// Pool hands on afterwards.
func (w *watchdog) stop() {
	close(w.quit)
	<-w.done
}

// expire cancels the live call if it has run for the CallTimeout and returns
// how long to sleep before looking again.
func (p *Pool) expire() time.Duration {
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
	if inst.start.CompareAndSwap(started, expiredStamp) {
		inst.cancel()
	}
	return p.timeout
}
