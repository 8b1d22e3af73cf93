package operator

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"

	"wasmstream.io/platform/abi"
)

// OnErrorQuarantine is on_udf_error: {policy: quarantine, after: N}.
const OnErrorQuarantine = "quarantine"

// HeaderQuarantine marks a dead letter whose key is parked: the record is
// also kept for release.
const HeaderQuarantine = "Platform-Quarantine"

// Bounds of a subtask's quarantine.
const (
	// DefaultQuarantineBudget is the bytes of parked records a subtask
	// keeps for release when the spec gives no budget.
	DefaultQuarantineBudget = 16 << 20
	// MaxQuarantineKeys bounds the keys a subtask counts failures of;
	// the failed records of further keys are dead-lettered uncounted.
	MaxQuarantineKeys = 4096
)

// ErrNotQuarantined: the key is not parked in the operator.
var ErrNotQuarantined = errors.New("key not quarantined")

// Quarantine stands before a keyed operator under on_udf_error: quarantine.
// The operator's error policy reports each failed record to it (Failed):
// the first After-1 failures of a key are dead-lettered, the After-th
// parks the key. From then on every record of the key, the one that parked
// it included, goes to the dead-letter subject with HeaderQuarantine and is
// kept, in arrival order, within Budget bytes (past it, a record is only
// dead-lettered, and counted as overflow); the operator does not see them.
// Release replays a key's kept records through the operator, in order,
// with its failures counted from 0 again. The parked keys, their counts and
// records are checkpointed with the subtask.
//
// Records of a key that is parked while the operator runs a batch (by a
// record before them in that batch) are processed by the operator; only
// those that also fail are parked.
type Quarantine struct {
	Vertex     string
	After      int
	Budget     int64
	DeadLetter Stage
	Next       Stage
	Counts     *ErrorCounts

	// mu guards keys and used against List and Release, which run on
	// other goroutines; the task goroutine holds it while it changes them.
	mu   sync.Mutex
	keys map[string]*quarantineKey
	used int64
	// parkedKeys counts the keys parked, so that a batch with none to
	// look up passes through as it is.
	parkedKeys int
	// releases are keys Release asked for, applied by the task goroutine
	// at its next batch, watermark or tick.
	releasing atomic.Bool
	releases  []string

	headers []abi.Header
	batch   [1]abi.Record
	vertex  []byte
}

// quarantineKey is one key that failed.
type quarantineKey struct {
	failures   int
	firstError string
	parked     bool
	// why is the error the records parked after the key are
	// dead-lettered with, made once.
	why []byte
	// records are the kept parked records (owned copies) and bytes their
	// size; count are all parked records, overflow those not kept.
	records  []abi.Record
	bytes    int64
	count    int64
	overflow int64
}

// QuarantinedKey is a parked key of one subtask, as the API lists it.
type QuarantinedKey struct {
	Operator string `json:"operator"`
	Subtask  int    `json:"subtask"`
	Key      string `json:"key"`
	// KeyBase64 is Key in unpadded base64url, which addresses a key that
	// is not UTF-8 text (JSON shows such bytes of Key as U+FFFD).
	KeyBase64 string `json:"key_base64"`
	// Failures are the failed records that parked the key (after), the
	// one that parked it included.
	Failures   int    `json:"failures"`
	FirstError string `json:"first_error"`
	// Parked counts the records parked (all on the dead-letter subject);
	// Kept are those a release replays, Overflow those past the budget.
	Parked   int64 `json:"parked"`
	Kept     int   `json:"kept"`
	Overflow int64 `json:"overflow"`
	Bytes    int64 `json:"bytes"`
}

func (q *Quarantine) init() {
	if q.keys == nil {
		q.keys = map[string]*quarantineKey{}
	}
}

func (q *Quarantine) budget() int64 {
	if q.Budget > 0 {
		return q.Budget
	}
	return DefaultQuarantineBudget
}

func (q *Quarantine) Process(ctx context.Context, recs []abi.Record) error {
	if err := q.applyReleases(ctx); err != nil {
		return err
	}
	return q.forward(ctx, recs)
}

// forward passes recs to the operator but for the records of parked keys,
// which it parks, keeping the order of the others.
func (q *Quarantine) forward(ctx context.Context, recs []abi.Record) error {
	if q.parkedKeys == 0 {
		return q.Next.Process(ctx, recs)
	}
	start := 0
	for i := range recs {
		k := q.keys[string(recs[i].Key)]
		if k == nil || !k.parked {
			continue
		}
		if start < i {
			if err := q.Next.Process(ctx, recs[start:i]); err != nil {
				return err
			}
		}
		start = i + 1
		if err := q.park(ctx, k, &recs[i], nil); err != nil {
			return err
		}
	}
	if start < len(recs) {
		return q.Next.Process(ctx, recs[start:])
	}
	return nil
}

// Failed takes a record of the operator that failed with cause.
func (q *Quarantine) Failed(ctx context.Context, rec *abi.Record, cause error) error {
	q.init()
	k := q.keys[string(rec.Key)]
	if k == nil {
		if len(q.keys) >= MaxQuarantineKeys {
			return q.deadLetter(ctx, rec, headerValue(cause.Error()), false)
		}
		k = &quarantineKey{firstError: cause.Error()}
		q.mu.Lock()
		q.keys[string(rec.Key)] = k
		q.mu.Unlock()
	}
	q.mu.Lock()
	if !k.parked {
		k.failures++
		if k.failures >= q.After {
			k.parked = true
			q.parkedKeys++
		}
	}
	q.mu.Unlock()
	if k.parked {
		return q.park(ctx, k, rec, headerValue(cause.Error()))
	}
	return q.deadLetter(ctx, rec, headerValue(cause.Error()), false)
}

// park dead-letters a record of parked key k, with the error why (nil: the
// key is parked) and keeps a copy of it within the budget.
func (q *Quarantine) park(ctx context.Context, k *quarantineKey, rec *abi.Record, why []byte) error {
	if why == nil {
		if k.why == nil {
			k.why = headerValue(fmt.Sprintf("key quarantined after %d failed records; the first: %s", k.failures, k.firstError))
		}
		why = k.why
	}
	if err := q.deadLetter(ctx, rec, why, true); err != nil {
		return err
	}
	size := recordSize(rec)
	q.mu.Lock()
	defer q.mu.Unlock()
	k.count++
	if q.used+size > q.budget() {
		k.overflow++
		return nil
	}
	k.records = append(k.records, copyRecord(rec))
	k.bytes += size
	q.used += size
	return nil
}

// The dead-letter headers' constant bytes, made once.
var (
	headerError      = []byte(HeaderError)
	headerOperator   = []byte(HeaderOperator)
	headerQuarantine = []byte(HeaderQuarantine)
	parkedValue      = []byte("parked")
)

func (q *Quarantine) deadLetter(ctx context.Context, rec *abi.Record, why []byte, parked bool) error {
	if q.vertex == nil {
		q.vertex = []byte(q.Vertex)
	}
	q.headers = append(q.headers[:0], rec.Headers...)
	q.headers = append(q.headers, abi.Header{Name: headerError, Value: why}, abi.Header{Name: headerOperator, Value: q.vertex})
	if parked {
		q.headers = append(q.headers, abi.Header{Name: headerQuarantine, Value: parkedValue})
	}
	q.batch[0] = abi.Record{Key: rec.Key, Value: rec.Value, Timestamp: rec.Timestamp, Headers: q.headers}
	if err := q.DeadLetter.Process(ctx, q.batch[:]); err != nil {
		return fmt.Errorf("dead letter: %w", err)
	}
	q.Counts.DeadLettered.Add(1)
	return nil
}

// Release asks for key's parked records to be replayed through the
// operator, which the task does at its next batch, watermark or tick.
func (q *Quarantine) Release(key string) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if k := q.keys[key]; k == nil || !k.parked {
		return ErrNotQuarantined
	}
	for _, r := range q.releases {
		if r == key {
			return nil
		}
	}
	q.releases = append(q.releases, key)
	q.releasing.Store(true)
	return nil
}

// applyReleases replays the keys Release asked for, in the order asked.
func (q *Quarantine) applyReleases(ctx context.Context) error {
	if !q.releasing.Load() {
		return nil
	}
	q.mu.Lock()
	keys := q.releases
	q.releases = nil
	q.releasing.Store(false)
	q.mu.Unlock()
	for _, key := range keys {
		q.mu.Lock()
		k := q.keys[key]
		if k == nil || !k.parked {
			q.mu.Unlock()
			continue
		}
		delete(q.keys, key)
		q.parkedKeys--
		q.used -= k.bytes
		q.mu.Unlock()
		if err := q.forward(ctx, k.records); err != nil {
			return fmt.Errorf("operator[%s]: release key %q: %w", q.Vertex, key, err)
		}
	}
	return nil
}

// List is the subtask's parked keys, by key.
func (q *Quarantine) List(subtask int) []QuarantinedKey {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []QuarantinedKey
	for key, k := range q.keys {
		if k.parked {
			out = append(out, QuarantinedKey{Operator: q.Vertex, Subtask: subtask, Key: key, KeyBase64: base64.RawURLEncoding.EncodeToString([]byte(key)), Failures: k.failures, FirstError: k.firstError,
				Parked: k.count, Kept: len(k.records), Overflow: k.overflow, Bytes: k.bytes})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

func (q *Quarantine) Advance(ctx context.Context, wm int64) error {
	if err := q.applyReleases(ctx); err != nil {
		return err
	}
	return q.Next.Advance(ctx, wm)
}

func (q *Quarantine) Tick(ctx context.Context, now int64) error {
	if err := q.applyReleases(ctx); err != nil {
		return err
	}
	return q.Next.Tick(ctx, now)
}

func (q *Quarantine) Finish(ctx context.Context) error {
	if err := q.applyReleases(ctx); err != nil {
		return err
	}
	return q.Next.Finish(ctx)
}

func (q *Quarantine) Close(ctx context.Context) error { return q.Next.Close(ctx) }

// recordOverhead is what a kept record costs beside its bytes.
const recordOverhead = 64

func recordSize(r *abi.Record) int64 {
	n := int64(len(r.Key) + len(r.Value) + recordOverhead)
	for _, h := range r.Headers {
		n += int64(len(h.Name) + len(h.Value) + 16)
	}
	return n
}

// copyRecord copies a record into memory of its own.
func copyRecord(r *abi.Record) abi.Record {
	size := len(r.Key) + len(r.Value)
	for _, h := range r.Headers {
		size += len(h.Name) + len(h.Value)
	}
	buf := make([]byte, 0, size)
	take := func(b []byte) []byte {
		if b == nil {
			return nil
		}
		start := len(buf)
		buf = append(buf, b...)
		return buf[start:len(buf):len(buf)]
	}
	out := abi.Record{Key: take(r.Key), Value: take(r.Value), Timestamp: r.Timestamp}
	if len(r.Headers) > 0 {
		out.Headers = make([]abi.Header, len(r.Headers))
		for i, h := range r.Headers {
			out.Headers[i] = abi.Header{Name: take(h.Name), Value: take(h.Value)}
		}
	}
	return out
}
