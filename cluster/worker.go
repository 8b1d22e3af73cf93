package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/internal/jsplace"
)

// WorkersBucket is the key-value bucket of the workers' registrations, one
// key per worker id.
const WorkersBucket = "PLATFORM_WORKERS"

// DefaultTimeout is how long a worker's heartbeat (or a lease's renewal)
// may be missing before it is dead (expired).
const DefaultTimeout = 5 * time.Second

// Worker is one worker's registration, as it writes it at each heartbeat.
type Worker struct {
	ID string `json:"id"`
	// Addr is the base URL of the worker's HTTP API, where other workers
	// forward requests about the jobs it runs.
	Addr    string    `json:"addr"`
	Slots   int       `json:"slots"`
	Version string    `json:"version"`
	Started time.Time `json:"started"`
	// Used are the slots its jobs take.
	Used int `json:"used"`
	// Jobs are the ids of the jobs it runs.
	Jobs []string `json:"jobs,omitempty"`
}

// Free is the number of slots not taken by jobs; it may be negative when a
// worker took over more than it has.
func (w Worker) Free() int { return w.Slots - w.Used }

// Config configures a Member.
type Config struct {
	// Worker is this worker's registration; ID, Addr and Slots are
	// required.
	Worker Worker
	// Timeout declares a worker dead when its heartbeat has been missing
	// this long, and a lease expired when not renewed this long
	// (DefaultTimeout when zero). Heartbeats and renewals happen every
	// third of it.
	Timeout time.Duration
	// Replicas of the cluster's buckets (1 when zero); a cluster of three
	// NATS nodes wants 3.
	Replicas int
	Logger   *slog.Logger
}

func (c Config) withDefaults() Config {
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Replicas < 1 {
		c.Replicas = 1
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Member is this worker's place in the cluster: it heartbeats its
// registration, watches every worker's and every lease, and grants leases.
// Its methods are safe for concurrent use.
type Member struct {
	cfg     Config
	log     *slog.Logger
	workers jetstream.KeyValue
	leases  jetstream.KeyValue

	// report gives the jobs and slots the heartbeat announces.
	report func() (jobs []string, used int)

	mu sync.Mutex
	// seen are the workers' last registrations and when this process saw
	// them.
	seen map[string]seenWorker
	// leaseSeen are the leases' last entries and when they were seen.
	leaseSeen map[string]seenLease
	// held are the leases this worker holds, by job.
	held map[string]*Lease
	// assigned are the jobs' latest assignments, heard by onAssign.
	assigned map[string]*Assignment
	onAssign func(job string, a *Assignment)
	// assignments is the bucket of the jobs' placements.
	assignments jetstream.KeyValue

	stop context.CancelFunc
	done sync.WaitGroup
}

type seenWorker struct {
	w    Worker
	at   time.Time
	gone bool
}

// Join registers this worker, creating the cluster's buckets if needed, and
// starts heartbeating and watching until Leave. report, called at each
// heartbeat, says which jobs this worker runs and how many slots they use.
func Join(ctx context.Context, js jetstream.JetStream, cfg Config, report func() (jobs []string, used int)) (*Member, error) {
	cfg = cfg.withDefaults()
	w := cfg.Worker
	switch {
	case w.ID == "":
		return nil, errors.New("cluster: the worker has no id")
	case w.Addr == "":
		return nil, fmt.Errorf("cluster: worker %s has no HTTP address", w.ID)
	case w.Slots < 1:
		return nil, fmt.Errorf("cluster: worker %s: slots must be at least 1, not %d", w.ID, w.Slots)
	}
	// Entries of workers long dead age out; a live worker rewrites its
	// own every third of the timeout.
	workers, err := jsplace.Create(ctx, func(ctx context.Context) (jetstream.KeyValue, error) {
		return js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket: WorkersBucket, Description: "platform workers: registrations and heartbeats",
			History: 1, TTL: max(20*cfg.Timeout, time.Minute), Storage: jetstream.FileStorage, Replicas: cfg.Replicas,
		})
	})
	if err != nil {
		return nil, fmt.Errorf("cluster: workers bucket: %w", err)
	}
	leases, err := jsplace.Create(ctx, func(ctx context.Context) (jetstream.KeyValue, error) {
		return js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket: LeasesBucket, Description: "platform job leases: which worker runs each job",
			History: 1, Storage: jetstream.FileStorage, Replicas: cfg.Replicas,
		})
	})
	if err != nil {
		return nil, fmt.Errorf("cluster: leases bucket: %w", err)
	}
	assignments, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket: AssignmentsBucket, Description: "platform job placements: which worker runs each subtask",
		History: 1, Storage: jetstream.FileStorage, Replicas: cfg.Replicas,
	})
	if err != nil {
		return nil, fmt.Errorf("cluster: assignments bucket: %w", err)
	}
	if report == nil {
		report = func() ([]string, int) { return nil, 0 }
	}
	m := &Member{cfg: cfg, log: cfg.Logger.With("worker", w.ID), workers: workers, leases: leases, assignments: assignments, report: report,
		seen: map[string]seenWorker{}, leaseSeen: map[string]seenLease{}, held: map[string]*Lease{}, assigned: map[string]*Assignment{}}
	if err := m.heartbeat(ctx); err != nil {
		return nil, err
	}
	runCtx, stop := context.WithCancel(context.Background())
	m.stop = stop
	if err := m.watch(runCtx); err != nil {
		stop()
		return nil, err
	}
	if err := m.watchAssignments(runCtx); err != nil {
		stop()
		m.done.Wait()
		return nil, err
	}
	m.done.Add(1)
	go m.heartbeatLoop(runCtx)
	return m, nil
}

// ID is this worker's id.
func (m *Member) ID() string { return m.cfg.Worker.ID }

// Timeout is the cluster's heartbeat and lease timeout as this worker
// judges it.
func (m *Member) Timeout() time.Duration { return m.cfg.Timeout }

// Self is this worker's registration.
func (m *Member) Self() Worker { return m.cfg.Worker }

func (m *Member) heartbeat(ctx context.Context) error {
	w := m.cfg.Worker
	w.Jobs, w.Used = m.report()
	data, err := json.Marshal(w)
	if err != nil {
		return err
	}
	if _, err := m.workers.Put(ctx, w.ID, data); err != nil {
		return fmt.Errorf("cluster: heartbeat of worker %s: %w", w.ID, err)
	}
	return nil
}

func (m *Member) heartbeatLoop(ctx context.Context) {
	defer m.done.Done()
	t := time.NewTicker(m.cfg.Timeout / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		hctx, cancel := context.WithTimeout(ctx, m.cfg.Timeout)
		if err := m.heartbeat(hctx); err != nil && ctx.Err() == nil {
			m.log.Warn("heartbeat failed", "error", err)
		}
		cancel()
	}
}

// watch follows the workers and leases buckets until ctx ends.
func (m *Member) watch(ctx context.Context) error {
	ww, err := m.workers.WatchAll(ctx)
	if err != nil {
		return fmt.Errorf("cluster: watch workers: %w", err)
	}
	lw, err := m.leases.WatchAll(ctx)
	if err != nil {
		_ = ww.Stop()
		return fmt.Errorf("cluster: watch leases: %w", err)
	}
	m.done.Add(2)
	go func() {
		defer m.done.Done()
		defer func() { _ = ww.Stop() }()
		for {
			select {
			case <-ctx.Done():
				return
			case e, ok := <-ww.Updates():
				if !ok {
					return
				}
				if e != nil {
					m.sawWorker(e)
				}
			}
		}
	}()
	go func() {
		defer m.done.Done()
		defer func() { _ = lw.Stop() }()
		for {
			select {
			case <-ctx.Done():
				return
			case e, ok := <-lw.Updates():
				if !ok {
					return
				}
				if e != nil {
					m.sawLease(e)
				}
			}
		}
	}()
	return nil
}

func (m *Member) sawWorker(e jetstream.KeyValueEntry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e.Operation() != jetstream.KeyValuePut {
		m.seen[e.Key()] = seenWorker{w: m.seen[e.Key()].w, at: time.Now(), gone: true}
		return
	}
	var w Worker
	if err := json.Unmarshal(e.Value(), &w); err != nil {
		m.log.Warn("unreadable worker registration", "key", e.Key(), "error", err)
		return
	}
	m.seen[e.Key()] = seenWorker{w: w, at: time.Now()}
}

// WorkerInfo is a worker as the API lists it.
type WorkerInfo struct {
	Worker
	Alive bool `json:"alive"`
	// LastSeen is when this worker last saw its heartbeat.
	LastSeen time.Time `json:"last_seen"`
}

// Workers lists every registered worker by id, dead ones included (until
// their entry ages out).
func (m *Member) Workers() []WorkerInfo {
	now := time.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]WorkerInfo, 0, len(m.seen))
	for _, s := range m.seen {
		if s.gone {
			continue
		}
		out = append(out, WorkerInfo{Worker: s.w, LastSeen: s.at.UTC(), Alive: now.Sub(s.at) < m.cfg.Timeout})
	}
	sortWorkers(out)
	return out
}

// Alive says whether worker id has heartbeated within the timeout.
func (m *Member) Alive(id string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.seen[id]
	return ok && !s.gone && time.Since(s.at) < m.cfg.Timeout
}

// Addr is the HTTP address of worker id, if it is registered.
func (m *Member) Addr(id string) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.seen[id]
	if !ok || s.gone {
		return "", false
	}
	return s.w.Addr, true
}

// Pause stops heartbeating and watching without leaving, as a process that
// is killed or frozen does; only tests pause.
func (m *Member) Pause() {
	m.stop()
	m.done.Wait()
}

// Leave stops heartbeating and watching and removes this worker's
// registration, so that others see it gone at once. It waits at most the
// timeout for NATS.
func (m *Member) Leave(ctx context.Context) error {
	m.stop()
	m.done.Wait()
	// With NATS gone the entry cannot be removed; it then ages out, and
	// the worker counts as dead after the timeout.
	ctx, cancel := context.WithTimeout(ctx, m.cfg.Timeout)
	defer cancel()
	if err := m.workers.Delete(ctx, m.cfg.Worker.ID); err != nil {
		return fmt.Errorf("cluster: leave: %w", err)
	}
	return nil
}
