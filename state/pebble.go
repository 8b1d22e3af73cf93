package state

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// The Pebble backend keeps every entry of a subtask in one Pebble database
// under its own directory, for state larger than memory. A key is
//
//	u16 key group | composite key | user key (map states)
//
// big-endian, so that a key group, a state and one map are each a
// contiguous range. Lists are appended with Pebble's concatenating merge.
// Value and list entries pass through an entryCache (cache.go).
// The write-ahead log is off: the state is rebuilt from snapshots after a
// failure, never from the database's own files, which Open clears.

// sweepChunk bounds the entries the sweeper handles per lock.
const sweepChunk = 512

type pebbleStore struct {
	states []stateInfo
	clock  Clock
	dir    string
	// mu serialises database access between the task and the sweeper, so
	// that the sweeper never deletes a value the task has just rewritten.
	mu sync.Mutex
	db *pebble.DB
	// fk is the scratch full key; val holds the last value read.
	fk  []byte
	val []byte

	stop, stopped chan struct{}
	// next is where the sweeper goes on; only the sweep under mu uses it.
	next    []byte
	scratch []byte
	batch   *pebble.Batch
	// cache holds recent point entries; nil when turned off.
	cache *entryCache
	// hits and misses count the cache's lookups.
	hits, misses int64
}

// pebbleLogger sends Pebble's errors to slog and drops its chatter.
type pebbleLogger struct{ log *slog.Logger }

func (l pebbleLogger) Infof(string, ...any) {}
func (l pebbleLogger) Errorf(format string, args ...any) {
	l.log.Error(fmt.Sprintf(format, args...), "component", "pebble")
}
func (l pebbleLogger) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf("pebble: "+format, args...))
}

// openPebble creates an empty database in dir (removing what was there),
// tuned by tune (whose fields are all set), with a cache of cacheBytes in
// front of it when positive, and starts its sweeper when a state has TTL and
// sweep is positive.
func openPebble(states []stateInfo, clock Clock, dir string, tune PebbleConfig, cacheBytes int64, sweep time.Duration, log *slog.Logger) (*pebbleStore, error) {
	if dir == "" {
		return nil, errors.New("pebble backend: no directory")
	}
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("pebble backend: clear %s: %w", dir, err)
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("pebble backend: %w", err)
	}
	db, err := pebble.Open(dir, tune.options(pebbleLogger{log: log}))
	if err != nil {
		return nil, fmt.Errorf("pebble backend: open %s: %w", dir, err)
	}
	p := &pebbleStore{states: states, clock: clock, dir: dir, db: db}
	if cacheBytes > 0 {
		p.cache = newEntryCache(cacheBytes)
	}
	if sweep > 0 && anyTTL(states) {
		p.stop, p.stopped = make(chan struct{}), make(chan struct{})
		go p.sweeper(sweep, log)
	}
	return p, nil
}

func anyTTL(states []stateInfo) bool {
	for i := range states {
		if states[i].ttl > 0 {
			return true
		}
	}
	return false
}

var noSync = pebble.NoSync

// full builds the database key of (kg, k, uk) in p.fk.
func (p *pebbleStore) full(kg int, k, uk []byte) []byte {
	p.fk = binary.BigEndian.AppendUint16(p.fk[:0], uint16(kg))
	p.fk = append(p.fk, k...)
	p.fk = append(p.fk, uk...)
	return p.fk
}

// read gets a key's value into p.val.
func (p *pebbleStore) read(key []byte) ([]byte, bool, error) {
	v, closer, err := p.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("pebble get: %w", err)
	}
	p.val = append(p.val[:0], v...)
	if err := closer.Close(); err != nil {
		return nil, false, fmt.Errorf("pebble get: %w", err)
	}
	return p.val, true, nil
}

func (p *pebbleStore) get(kg int, k []byte) ([]byte, bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cache != nil {
		return p.cachedGet(p.full(kg, k, nil))
	}
	return p.read(p.full(kg, k, nil))
}

func (p *pebbleStore) put(kg int, k, v []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cache != nil {
		return p.cachedPut(p.full(kg, k, nil), v, true)
	}
	return wrapPebble("set", p.db.Set(p.full(kg, k, nil), v, noSync))
}

func (p *pebbleStore) appendTo(kg int, k, v []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cache != nil {
		return p.cachedAppend(p.full(kg, k, nil), v)
	}
	return wrapPebble("merge", p.db.Merge(p.full(kg, k, nil), v, noSync))
}

func (p *pebbleStore) del(kg int, k []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cache != nil {
		return p.cachedPut(p.full(kg, k, nil), nil, false)
	}
	return wrapPebble("delete", p.db.Delete(p.full(kg, k, nil), noSync))
}

func (p *pebbleStore) subGet(kg int, k, uk []byte) ([]byte, bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.read(p.full(kg, k, uk))
}

func (p *pebbleStore) subPut(kg int, k, uk, v []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return wrapPebble("set", p.db.Set(p.full(kg, k, uk), v, noSync))
}

func (p *pebbleStore) subDel(kg int, k, uk []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return wrapPebble("delete", p.db.Delete(p.full(kg, k, uk), noSync))
}

func wrapPebble(op string, err error) error {
	if err != nil {
		return fmt.Errorf("pebble %s: %w", op, err)
	}
	return nil
}

// successor is the smallest key after every key with prefix, appended to
// dst; nil when there is none (a prefix of 0xff bytes).
func successor(dst, prefix []byte) []byte {
	dst = append(dst[:0], prefix...)
	for i := len(dst) - 1; i >= 0; i-- {
		if dst[i] != 0xff {
			dst[i]++
			return dst[:i+1]
		}
	}
	return nil
}

func (p *pebbleStore) subRange(kg int, k []byte, fn func(uk, v []byte) error) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	lower := p.full(kg, k, nil)
	upper := successor(nil, lower)
	it, err := p.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return fmt.Errorf("pebble iterate: %w", err)
	}
	n := len(lower)
	for it.First(); it.Valid(); it.Next() {
		v, err := it.ValueAndErr()
		if err == nil {
			err = fn(it.Key()[n:], v)
		}
		if err != nil {
			return errors.Join(err, it.Close())
		}
	}
	return wrapPebble("iterate", errors.Join(it.Error(), it.Close()))
}

func (p *pebbleStore) subClear(kg int, k []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	lower := p.full(kg, k, nil)
	return wrapPebble("delete range", p.db.DeleteRange(lower, successor(nil, lower), noSync))
}

// sweep drops expired data from up to n entries (every entry when n < 0),
// continuing where the last sweep stopped.
func (p *pebbleStore) sweep(n int) error {
	if n < 0 {
		p.mu.Lock()
		p.next = nil
		p.mu.Unlock()
	}
	for visited := 0; n < 0 || visited < n; {
		chunk := sweepChunk
		if n >= 0 {
			chunk = min(chunk, n-visited)
		}
		seen, done, err := p.sweepChunk(chunk)
		if err != nil || done {
			return err
		}
		visited += seen
	}
	return nil
}

// sweepChunk handles up to limit entries from p.next under the lock and
// reports whether it reached the end (then the next sweep starts over). It
// writes the cache's dirty entries first, so that it sees them, and drops
// the cached copies of what it changes.
func (p *pebbleStore) sweepChunk(limit int) (seen int, done bool, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.flushCache(); err != nil {
		return 0, false, err
	}
	now := p.clock.Now()
	it, err := p.db.NewIter(&pebble.IterOptions{LowerBound: p.next})
	if err != nil {
		return 0, false, fmt.Errorf("pebble sweep: %w", err)
	}
	b := p.resetBatch()
	valid := it.First()
	for ; valid && seen < limit; valid = it.Next() {
		seen++
		key := it.Key()
		if len(key) < 2+ckHead {
			continue
		}
		id := stateOf(key[2:])
		if int(id) >= len(p.states) || p.states[id].ttl == 0 {
			continue
		}
		st := &p.states[id]
		v, verr := it.ValueAndErr()
		if verr != nil {
			err = verr
			break
		}
		if st.kind == KindMap {
			if st.stampExpired(v, now) {
				err = b.Delete(key, nil)
			}
		} else if keep, drop := st.prunePoint(v, now, p.scratch); drop {
			p.dropCached(key)
			err = b.Delete(key, nil)
		} else if len(keep) != len(v) {
			p.dropCached(key)
			p.scratch = keep
			err = b.Set(key, keep, nil)
		}
		if err != nil {
			break
		}
	}
	if valid && err == nil {
		p.next = append(p.next[:0], it.Key()...)
	} else {
		p.next = nil
	}
	err = errors.Join(err, it.Error(), it.Close())
	if err == nil && !b.Empty() {
		err = p.db.Apply(b, noSync)
	}
	return seen, !valid, wrapPebble("sweep", err)
}

// sweeper drops expired entries in the background, one pass per interval.
func (p *pebbleStore) sweeper(interval time.Duration, log *slog.Logger) {
	defer close(p.stopped)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
		}
		if err := p.sweep(-1); err != nil {
			log.Warn("state sweep failed", "dir", p.dir, "error", err)
		}
	}
}

func (p *pebbleStore) bytes() int64 { return 0 }

func (p *pebbleStore) budgetBytes() int64 { return 0 }

// close stops the sweeper and removes the database: its state lives on in
// snapshots only.
func (p *pebbleStore) close() error {
	if p.stop != nil {
		close(p.stop)
		<-p.stopped
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var errs []error
	if p.batch != nil {
		errs = append(errs, p.batch.Close())
	}
	errs = append(errs, p.db.Close(), os.RemoveAll(p.dir))
	return wrapPebble("close", errors.Join(errs...))
}

// snapshot writes the cache's dirty entries to the database and takes the
// database's snapshot: later writes, cached or not, stay out of it.
func (p *pebbleStore) snapshot() (storeSnapshot, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.flushCache(); err != nil {
		return nil, err
	}
	return &pebbleSnapshot{states: p.states, snap: p.db.NewSnapshot()}, nil
}

type pebbleSnapshot struct {
	states []stateInfo
	snap   *pebble.Snapshot
	once   sync.Once
}

func (s *pebbleSnapshot) each(kg int, fn func(k, uk, v []byte, sub bool) error) error {
	lower := binary.BigEndian.AppendUint16(nil, uint16(kg))
	upper := binary.BigEndian.AppendUint16(nil, uint16(kg+1))
	if kg == 0xffff {
		upper = nil
	}
	it, err := s.snap.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return fmt.Errorf("pebble snapshot: %w", err)
	}
	for it.First(); it.Valid(); it.Next() {
		key := it.Key()[2:]
		_, _, uk, ok := splitComposite(key)
		if !ok {
			err = fmt.Errorf("pebble snapshot: malformed key %x", it.Key())
			break
		}
		v, verr := it.ValueAndErr()
		if verr != nil {
			err = verr
			break
		}
		id := int(stateOf(key))
		if id >= len(s.states) {
			err = fmt.Errorf("pebble snapshot: key of state %d", id)
			break
		}
		if err = fn(key[:len(key)-len(uk)], uk, v, s.states[id].kind == KindMap); err != nil {
			break
		}
	}
	return errors.Join(err, it.Close())
}

func (s *pebbleSnapshot) release() {
	s.once.Do(func() { _ = s.snap.Close() })
}
