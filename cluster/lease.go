package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// LeasesBucket is the key-value bucket of the job leases, one key per job
// id.
const LeasesBucket = "PLATFORM_LEASES"

// maxOrphans bounds the checkpoint ids a lease remembers as allocated by an
// earlier owner and never completed.
const maxOrphans = 32

// Errors callers branch on.
var (
	// ErrHeld: the job's lease is held by a live worker.
	ErrHeld = errors.New("the job's lease is held by another worker")
	// ErrLost: this worker no longer holds the lease (another took it over,
	// or it was removed).
	ErrLost = errors.New("the job's lease has moved to another worker")
)

// LeaseRecord is a lease's entry. Besides the holder it keeps the job's
// checkpoint lineage: the ids allocated and completed under every lease the
// job has had, so that a new owner never takes an id an earlier one used
// and never restores a checkpoint an earlier one did not complete.
type LeaseRecord struct {
	Job string `json:"job"`
	// Worker holds the lease; empty once released.
	Worker   string    `json:"worker"`
	Version  string    `json:"version"`
	Acquired time.Time `json:"acquired"`
	Renewed  time.Time `json:"renewed"`
	// Allocated is the highest checkpoint id triggered, Completed the
	// highest completed.
	Allocated int64 `json:"allocated,omitempty"`
	Completed int64 `json:"completed,omitempty"`
	// Orphans are ids an earlier owner triggered and did not complete
	// before its lease was taken over: whatever it stored under them is
	// not the job's.
	Orphans []int64 `json:"orphans,omitempty"`
}

type seenLease struct {
	rec  LeaseRecord
	rev  uint64
	at   time.Time
	gone bool
}

func (m *Member) sawLease(e jetstream.KeyValueEntry) {
	m.mu.Lock()
	if e.Operation() != jetstream.KeyValuePut {
		m.leaseSeen[e.Key()] = seenLease{rec: m.leaseSeen[e.Key()].rec, rev: e.Revision(), at: time.Now(), gone: true}
		m.mu.Unlock()
		m.checkHeld(e.Key(), "", e.Revision(), true)
		return
	}
	var rec LeaseRecord
	if err := json.Unmarshal(e.Value(), &rec); err != nil {
		m.mu.Unlock()
		m.log.Warn("unreadable lease", "job", e.Key(), "error", err)
		return
	}
	m.leaseSeen[e.Key()] = seenLease{rec: rec, rev: e.Revision(), at: time.Now()}
	m.mu.Unlock()
	m.checkHeld(e.Key(), rec.Worker, e.Revision(), false)
}

// checkHeld marks a lease this worker holds lost when the entry seen shows
// it deleted or taken by another worker.
func (m *Member) checkHeld(job, worker string, rev uint64, gone bool) {
	m.mu.Lock()
	l, ok := m.held[job]
	m.mu.Unlock()
	if !ok || (!gone && worker == m.ID()) {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if rev > l.rev && !l.released {
		l.loseLocked()
	}
}

// LeaseState is what this worker knows of a job's lease.
type LeaseState struct {
	// Held: there is a lease entry; Holder holds it.
	Held   bool
	Holder string
	// Expired: the holder has not renewed it within the timeout (or there
	// is no entry), so it may be taken over.
	Expired bool
	Version string
}

// Lease says what this worker has seen of job's lease.
func (m *Member) Lease(job string) LeaseState {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.leaseSeen[job]
	if !ok || s.gone {
		return LeaseState{Expired: true}
	}
	if s.rec.Worker == "" {
		return LeaseState{Expired: true, Version: s.rec.Version}
	}
	return LeaseState{Held: true, Holder: s.rec.Worker, Version: s.rec.Version, Expired: time.Since(s.at) >= m.cfg.Timeout}
}

// Holders maps every job whose lease entry exists to its holder.
func (m *Member) Holders() map[string]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]string, len(m.leaseSeen))
	for job, s := range m.leaseSeen {
		if !s.gone && s.rec.Worker != "" {
			out[job] = s.rec.Worker
		}
	}
	return out
}

// Acquire takes the lease of a new job, which must have none.
func (m *Member) Acquire(ctx context.Context, job string) (*Lease, error) {
	now := time.Now().UTC()
	rec := LeaseRecord{Job: job, Worker: m.ID(), Version: m.cfg.Worker.Version, Acquired: now, Renewed: now}
	data, err := json.Marshal(rec)
	if err != nil {
		return nil, err
	}
	rev, err := m.leases.Create(ctx, job, data)
	if errors.Is(err, jetstream.ErrKeyExists) {
		return nil, fmt.Errorf("job %s: %w", job, ErrHeld)
	}
	if err != nil {
		return nil, fmt.Errorf("cluster: lease of job %s: %w", job, err)
	}
	return m.hold(rec, rev), nil
}

// TakeOver takes job's lease from a holder that has let it expire (or
// from no holder at all), keeping the job's checkpoint lineage. It fails
// with ErrHeld when the lease is not expired, or another worker took it
// first.
func (m *Member) TakeOver(ctx context.Context, job string) (*Lease, error) {
	if st := m.Lease(job); !st.Expired {
		return nil, fmt.Errorf("job %s: held by %s: %w", job, st.Holder, ErrHeld)
	}
	now := time.Now().UTC()
	entry, err := m.leases.Get(ctx, job)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return m.Acquire(ctx, job)
	}
	if err != nil {
		return nil, fmt.Errorf("cluster: lease of job %s: %w", job, err)
	}
	var old LeaseRecord
	if err := json.Unmarshal(entry.Value(), &old); err != nil {
		return nil, fmt.Errorf("cluster: lease of job %s: %w", job, err)
	}
	// Only the revision the watch has seen unchanged for the timeout is
	// expired: an entry not seen yet (a lease just acquired, whose watch
	// update has not arrived) or newer than the one seen is fresh.
	m.mu.Lock()
	seen, ok := m.leaseSeen[job]
	if old.Worker != "" && (!ok || seen.gone || seen.rev != entry.Revision()) {
		m.leaseSeen[job] = seenLease{rec: old, rev: entry.Revision(), at: time.Now()}
		m.mu.Unlock()
		return nil, fmt.Errorf("job %s: renewed by %s: %w", job, old.Worker, ErrHeld)
	}
	m.mu.Unlock()
	rec := old
	rec.Worker, rec.Version, rec.Acquired, rec.Renewed = m.ID(), m.cfg.Worker.Version, now, now
	if old.Allocated > old.Completed && !slices.Contains(rec.Orphans, old.Allocated) {
		rec.Orphans = append(slices.Clone(rec.Orphans), old.Allocated)
		if len(rec.Orphans) > maxOrphans {
			rec.Orphans = rec.Orphans[len(rec.Orphans)-maxOrphans:]
		}
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return nil, err
	}
	rev, err := m.leases.Update(ctx, job, data, entry.Revision())
	if isConflict(err) {
		return nil, fmt.Errorf("job %s: %w", job, ErrHeld)
	}
	if err != nil {
		return nil, fmt.Errorf("cluster: lease of job %s: %w", job, err)
	}
	m.log.Info("lease taken over", "job", job, "from", old.Worker)
	return m.hold(rec, rev), nil
}

func isConflict(err error) bool {
	return errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyNotFound)
}

// Lease is a lease this worker holds. It renews itself every third of the
// timeout until released or lost. Its checkpoint methods implement the
// runtime's checkpoint lineage: each is a compare-and-set of the entry, so
// that a worker whose lease has moved can neither take a checkpoint id nor
// complete a checkpoint. Lease's methods are safe for concurrent use; mu
// is held across each write, so that writes happen one at a time in
// revision order. Lease.mu and Member.mu are never held together.
type Lease struct {
	m    *Member
	log  *slog.Logger
	lost chan struct{}
	stop chan struct{}
	done chan struct{}

	mu       sync.Mutex
	rec      LeaseRecord
	rev      uint64
	isLost   bool
	released bool
}

func (m *Member) hold(rec LeaseRecord, rev uint64) *Lease {
	l := &Lease{m: m, log: m.log.With("job", rec.Job), rec: rec, rev: rev,
		lost: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	m.mu.Lock()
	m.leaseSeen[rec.Job] = seenLease{rec: rec, rev: rev, at: time.Now()}
	m.held[rec.Job] = l
	m.mu.Unlock()
	go l.renewLoop()
	return l
}

// Job is the id of the job the lease is of.
func (l *Lease) Job() string { return l.rec.Job }

// Lost is closed when the lease is found to have moved.
func (l *Lease) Lost() <-chan struct{} { return l.lost }

// Revision is the entry's revision this worker last wrote.
func (l *Lease) Revision() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rev
}

func (l *Lease) renewLoop() {
	defer close(l.done)
	t := time.NewTicker(l.m.cfg.Timeout / 3)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-l.lost:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), l.m.cfg.Timeout)
		err := l.update(ctx, func(r *LeaseRecord) { r.Renewed = time.Now().UTC() })
		cancel()
		if err != nil && !errors.Is(err, ErrLost) {
			// NATS is unreachable: the holder keeps the lease until
			// someone else takes it, which the next renewal finds.
			l.log.Warn("lease renewal failed", "error", err)
		}
	}
}

// update writes the entry changed by change, with compare-and-set on the
// revision last written; a conflict means the lease is lost.
func (l *Lease) update(ctx context.Context, change func(*LeaseRecord)) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.isLost || l.released {
		return fmt.Errorf("job %s: %w", l.rec.Job, ErrLost)
	}
	rec := l.rec
	change(&rec)
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	rev, err := l.m.leases.Update(ctx, rec.Job, data, l.rev)
	if isConflict(err) {
		l.loseLocked()
		return fmt.Errorf("job %s: %w", rec.Job, ErrLost)
	}
	if err != nil {
		return fmt.Errorf("cluster: lease of job %s: %w", rec.Job, err)
	}
	l.rec, l.rev = rec, rev
	return nil
}

// loseLocked marks the lease lost; l.mu is held.
func (l *Lease) loseLocked() {
	if !l.isLost {
		l.isLost = true
		close(l.lost)
		l.log.Debug("lease lost")
	}
}

// Trigger implements the checkpoint fence: it records id as allocated.
func (l *Lease) Trigger(ctx context.Context, id int64) error {
	return l.update(ctx, func(r *LeaseRecord) { r.Allocated = max(r.Allocated, id) })
}

// Complete implements the checkpoint fence: it records id as completed.
func (l *Lease) Complete(ctx context.Context, id int64) error {
	return l.update(ctx, func(r *LeaseRecord) { r.Completed = max(r.Completed, id) })
}

// Counts says whether checkpoint id completed in the job's lineage.
func (l *Lease) Counts(id int64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return id <= l.rec.Completed && !slices.Contains(l.rec.Orphans, id)
}

// NextID is the least checkpoint id not yet allocated to any owner.
func (l *Lease) NextID() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rec.Allocated + 1
}

// Release gives the lease up, if this worker still holds it, so that
// another worker may take the job at once: the entry stays, with no holder,
// because it carries the job's checkpoint lineage.
func (l *Lease) Release(ctx context.Context) error {
	l.mu.Lock()
	if l.released {
		l.mu.Unlock()
		return nil
	}
	close(l.stop)
	l.mu.Unlock()
	<-l.done
	err := l.update(ctx, func(r *LeaseRecord) { r.Worker, r.Renewed = "", time.Now().UTC() })
	l.mu.Lock()
	l.released = true
	l.mu.Unlock()
	l.m.unhold(l)
	if err != nil && !errors.Is(err, ErrLost) {
		return fmt.Errorf("cluster: release the lease of job %s: %w", l.rec.Job, err)
	}
	return nil
}

// Remove deletes the lease entry of a job that has ended and is deleted.
func (m *Member) Remove(ctx context.Context, job string) error {
	if err := m.leases.Purge(ctx, job); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		return fmt.Errorf("cluster: remove the lease of job %s: %w", job, err)
	}
	return nil
}

// Forget stops renewing the lease without giving it up: the process is
// going away and another worker takes the job once the lease expires.
func (l *Lease) Forget() {
	l.mu.Lock()
	if l.released {
		l.mu.Unlock()
		return
	}
	l.released = true
	close(l.stop)
	l.mu.Unlock()
	<-l.done
	l.m.unhold(l)
}

func (m *Member) unhold(l *Lease) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.held[l.rec.Job] == l {
		delete(m.held, l.rec.Job)
	}
}
