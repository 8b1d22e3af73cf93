package exec

import (
	"sync"
	"time"
)

// PressureInterval is how often backpressure is sampled.
const PressureInterval = time.Second

// PressureSampler measures, per subtask, how the last interval split into
// time backpressured (waiting for output buffers: Flink's
// backPressuredTimeMsPerSecond as a ratio), idle (waiting for input) and
// busy, with the exchange pool usages at the end of the interval and the
// share of it each chained vertex took. It runs in its own goroutine while
// the job runs; the API reads its last sample.
type PressureSampler struct {
	mu      sync.Mutex
	sampled time.Time
	samples map[SubtaskKey]SubtaskSample
}

// SubtaskKey names a subtask of a task (the task is its chain head's id).
type SubtaskKey struct {
	Task    string
	Subtask int
}

// SubtaskSample is one subtask's last interval, as shares of its wall time.
type SubtaskSample struct {
	Backpressured float64
	Idle          float64
	Busy          float64
	HasInput      bool
	HasOutput     bool
	InPoolUsage   float64
	OutPoolUsage  float64
	// VertexBusy is each chain vertex's own busy share, by vertex id.
	VertexBusy map[string]float64
}

func NewPressureSampler() *PressureSampler {
	return &PressureSampler{samples: map[SubtaskKey]SubtaskSample{}}
}

// Start samples tasks until the returned stop is called.
func (p *PressureSampler) Start(all []*Task) (stop func()) {
	var tasks []*Task
	for _, t := range all {
		// Another worker samples the subtasks it runs (Merge).
		if t.net == nil || t.net.remote == nil {
			tasks = append(tasks, t)
		}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		last := make([]taskFigures, len(tasks))
		now := MonoNanos()
		for i, t := range tasks {
			last[i] = t.figures(now)
		}
		tick := time.NewTicker(PressureInterval)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			now := MonoNanos()
			next := make(map[SubtaskKey]SubtaskSample, len(tasks))
			for i, t := range tasks {
				f := t.figures(now)
				if s, ok := sampleOf(t, last[i], f); ok {
					next[SubtaskKey{t.name, t.subtask}] = s
				}
				last[i] = f
			}
			p.mu.Lock()
			for k, s := range next {
				p.samples[k] = s
			}
			p.sampled = time.Now().UTC()
			p.mu.Unlock()
		}
	}()
	return func() { close(done); <-finished }
}

// sampleOf turns two figures of t into the shares of the interval between
// them. It reports false when the task did not run in the interval.
func sampleOf(t *Task, prev, cur taskFigures) (SubtaskSample, bool) {
	wall := cur.wall - prev.wall
	if wall <= 0 {
		return SubtaskSample{}, false
	}
	share := func(d int64) float64 { return min(max(float64(d)/float64(wall), 0), 1) }
	s := SubtaskSample{
		Backpressured: share(cur.backpressured - prev.backpressured),
		Idle:          share(cur.idle - prev.idle),
		HasInput:      cur.hasInput,
		HasOutput:     cur.hasOutput,
		InPoolUsage:   cur.in.InPoolUsage,
		OutPoolUsage:  cur.outPoolUsage,
		VertexBusy:    make(map[string]float64, len(cur.vertexBusy)),
	}
	s.Busy = max(1-s.Backpressured-s.Idle, 0)
	for i, v := range t.stats.vertices {
		if i < len(prev.vertexBusy) {
			s.VertexBusy[v.id] = share(cur.vertexBusy[i] - prev.vertexBusy[i])
		}
	}
	return s, true
}

// Ratio is the task's last sampled backpressured Ratio, averaged over its
// subtasks (0 before the first sample).
func (p *PressureSampler) Ratio(task string) float64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	sum, n := 0.0, 0
	for k, s := range p.samples {
		if k.Task == task {
			sum += s.Backpressured
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// Snapshot copies the last samples and their time (zero before the first).
// The samples' vertexBusy maps are shared: they are never written again.
func (p *PressureSampler) Snapshot() (time.Time, map[SubtaskKey]SubtaskSample) {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[SubtaskKey]SubtaskSample, len(p.samples))
	for k, s := range p.samples {
		out[k] = s
	}
	return p.sampled, out
}

// Merge takes the samples of subtasks another worker runs.
func (p *PressureSampler) Merge(samples []RemoteSample) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range samples {
		p.samples[SubtaskKey{s.Task, s.Subtask}] = s.Sample
	}
}

// RemoteSample is a subtask's sample as a worker sends it to the job's
// leader.
type RemoteSample struct {
	Task    string        `json:"task"`
	Subtask int           `json:"subtask"`
	Sample  SubtaskSample `json:"sample"`
}
