package connector

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/abi"
)

// KVTxSinkConfig configures one subtask of an exactly-once KV sink: as a
// TxSinkConfig, with the bucket in place of the subject.
type KVTxSinkConfig struct {
	Bucket string
	// Prefix, MaxInFlight, Budget, SpillDir and Fence are a TxSink's
	// (TxSinkConfig); a fence is taken on the bucket's stream.
	Prefix      string
	MaxInFlight int
	Budget      int64
	SpillDir    string
	Fence       *Fence
}

// NewKVTxSink returns an exactly-once KV sink subtask: a TxSink whose
// records are KV writes (the value under the key, or a delete for a record
// with Platform-Op delete), each published to its key's subject, committed
// with the checkpoint after them as a TxSink commits, and fenced like one
// in cluster mode.
//
// A commit writes only the last record of each key of an epoch, and a
// recovery only the last of each key across the epochs it commits. That
// is what makes a replay exact with a bucket that keeps one value per key:
// JetStream de-duplicates by message id only the ids it still knows, and a
// server rebuilds that knowledge from the messages it still holds, so that
// an earlier write of a key, whose message the bucket dropped for a later
// one, would be stored again and undo the later one. The last write of a
// key is never dropped for another of the same commit, so it is either
// stored (and skipped as a duplicate, or found by a read-back) or stored
// now; the bucket ends with the values an uninterrupted run leaves.
func NewKVTxSink(ctx context.Context, js jetstream.JetStream, cfg KVTxSinkConfig) (*TxSink, error) {
	return buildTxSink(ctx, js, TxSinkConfig{
		Subject: KVFilter(cfg.Bucket, ""), Prefix: cfg.Prefix, MaxInFlight: cfg.MaxInFlight,
		Budget: cfg.Budget, SpillDir: cfg.SpillDir, Fence: cfg.Fence,
	}, &kvTarget{bucket: cfg.Bucket})
}

// kvTarget is the bucket a KV sink writes to.
type kvTarget struct {
	bucket string
}

// stream finds the bucket's stream and its configuration.
func (t *kvTarget) stream(ctx context.Context, js jetstream.JetStream) (string, jetstream.StreamConfig, error) {
	if !ValidBucket(t.bucket) {
		return "", jetstream.StreamConfig{}, fmt.Errorf("connector: KV sink: bucket %q: want letters, digits, '-' and '_'", t.bucket)
	}
	name := KVStream(t.bucket)
	st, err := js.Stream(ctx, name)
	switch {
	case errors.Is(err, jetstream.ErrStreamNotFound):
		return "", jetstream.StreamConfig{}, fmt.Errorf("connector: KV sink: bucket %q: %w", t.bucket, ErrNoBucket)
	case err != nil:
		return "", jetstream.StreamConfig{}, fmt.Errorf("connector: KV sink: bucket %q: %w", t.bucket, err)
	}
	return name, st.CachedInfo().Config, nil
}

// route makes the publishers send each record's message to its key's
// subject.
func (t *kvTarget) route(pub *ackPublisher, batches *batchPublisher) {
	prefix := KVSubject(t.bucket, "")
	if pub != nil {
		pub.hdr.route(&pub.msg.Subject, prefix)
	}
	if batches != nil {
		batches.hdr.route(&batches.msg.Subject, prefix)
	}
}

// keyAt is the place of a record in the epochs of one commit.
type keyAt struct {
	epoch int
	index int64
}

// supersededKeys returns, for epochs committed in this order, the indexes
// of each epoch's records that a later record of the same key (in the same
// epoch or a later one) supersedes: those a KV sink does not write. It
// holds each distinct key in memory once.
func supersededKeys(epochs []*Epoch) ([]map[int64]bool, error) {
	last := map[string]keyAt{}
	for k, e := range epochs {
		err := e.each(func(index int64, r *abi.Record) error {
			last[string(r.Key)] = keyAt{k, index}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	out := make([]map[int64]bool, len(epochs))
	for k, e := range epochs {
		skip := map[int64]bool{}
		err := e.each(func(index int64, r *abi.Record) error {
			if last[string(r.Key)] != (keyAt{k, index}) {
				skip[index] = true
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		out[k] = skip
	}
	return out, nil
}

// compact adds to job's skips the records a later one of the same key in
// its epoch supersedes, unless the job is compacted already (Recover
// compacts across epochs).
func (s *TxSink) compact(job *commitJob) error {
	if s.kv == nil || job.compacted {
		return nil
	}
	skips, err := supersededKeys([]*Epoch{job.e})
	if err != nil {
		return err
	}
	job.skip = mergeSkips(job.skip, skips[0])
	job.compacted = true
	return nil
}

// mergeSkips is the union of two sets of indexes; either may be nil.
func mergeSkips(a, b map[int64]bool) map[int64]bool {
	if len(a) == 0 {
		return b
	}
	for i := range b {
		a[i] = true
	}
	return a
}
