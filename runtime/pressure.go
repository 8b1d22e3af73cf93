package runtime

import (
	"sync"
	"time"
)

// pressureInterval is how often backpressure is sampled.
const pressureInterval = time.Second

// pressureSampler measures, per task, the share of the last interval its
// subtasks spent waiting for output buffers (Flink's backPressuredTimeMsPerSecond
// as a ratio). It runs in its own goroutine while the job runs.
type pressureSampler struct {
	mu     sync.Mutex
	ratios map[string]float64
}

func newPressureSampler() *pressureSampler {
	return &pressureSampler{ratios: map[string]float64{}}
}

// start samples tasks until the returned stop is called.
func (p *pressureSampler) start(tasks []*task) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		subtasks := map[string]int{}
		for _, t := range tasks {
			subtasks[t.name]++
		}
		sample := func() map[string]int64 {
			now := map[string]int64{}
			for _, t := range tasks {
				now[t.name] += t.backpressuredNanos()
			}
			return now
		}
		last := sample()
		prev := time.Now()
		tick := time.NewTicker(pressureInterval)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			now := sample()
			elapsed := time.Since(prev)
			prev = time.Now()
			p.mu.Lock()
			for name, n := range now {
				r := float64(n-last[name]) / float64(elapsed.Nanoseconds()*int64(subtasks[name]))
				p.ratios[name] = min(max(r, 0), 1)
			}
			p.mu.Unlock()
			last = now
		}
	}()
	return func() { close(done); <-finished }
}

// ratio is the task's last sampled backpressured ratio (0 before the first
// sample).
func (p *pressureSampler) ratio(task string) float64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ratios[task]
}
