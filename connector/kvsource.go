package connector

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/abi"
)

// A NATS key-value bucket NAME is the JetStream stream KV_NAME, and its key K
// the subject $KV.NAME.K: a put is a message with the value as payload, a
// delete or purge a message with the header KV-Operation DEL or PURGE.
const (
	kvStreamPrefix  = "KV_"
	kvSubjectPrefix = "$KV."
	kvOperation     = "KV-Operation"
	kvDel           = "DEL"
	kvPurge         = "PURGE"
)

// HeaderOp is the header of a record of a KV source that says what the
// entry is, and of a record for a KV sink that says what to do with its
// key: OpPut or OpDelete.
const (
	HeaderOp = "Platform-Op"
	OpPut    = "put"
	OpDelete = "delete"
)

// kvEndSuffix follows a bounded KV source's filter in its positions to name
// its end (KVSource.Positions).
const kvEndSuffix = "#end"

// ErrNoBucket: the KV bucket a source or sink names does not exist.
var ErrNoBucket = errors.New("no such KV bucket")

// KVStream is the stream of bucket.
func KVStream(bucket string) string { return kvStreamPrefix + bucket }

// KVSubject is the subject of key in bucket.
func KVSubject(bucket, key string) string { return kvSubjectPrefix + bucket + "." + key }

// KVFilter is the subject filter of the keys matching keys (a subject
// filter over keys, ">" for all) in bucket: the one split of a KV source,
// which names its position.
func KVFilter(bucket, keys string) string {
	if keys == "" {
		keys = ">"
	}
	return KVSubject(bucket, keys)
}

// ValidBucket reports whether name can name a KV or object store bucket:
// letters, digits, '-' and '_'.
func ValidBucket(name string) bool {
	if name == "" {
		return false
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// ValidKVKey reports whether key is a key NATS KV accepts: letters, digits
// and - / _ = ., not starting or ending with '.', no empty token.
func ValidKVKey(key []byte) bool {
	if len(key) == 0 || key[0] == '.' || key[len(key)-1] == '.' {
		return false
	}
	for i, c := range key {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '/', c == '_', c == '=':
		case c == '.' && key[i-1] != '.':
		default:
			return false
		}
	}
	return true
}

// ValidKVKeys reports whether keys is a subject filter over KV keys: keys
// whose tokens may also be '*', the last one '>'.
func ValidKVKeys(keys string) bool {
	if keys == "" {
		return false
	}
	tokens := strings.Split(keys, ".")
	for i, t := range tokens {
		switch {
		case t == "*":
		case t == ">" && i == len(tokens)-1:
		case t == "" || !ValidKVKey([]byte(t)):
			return false
		}
	}
	return true
}

// KVSourceConfig configures one subtask of a KV source.
type KVSourceConfig struct {
	Bucket string
	// Keys is a subject filter over the bucket's keys; "" or ">": all.
	Keys string
	// Bounded reads the entries present at start and ends.
	Bounded bool
	// Subtask and Parallelism place this subtask: the source has one
	// split, read by subtask 0.
	Subtask, Parallelism int
	// End fixes the bounded end (KVBoundedEnd), Start the position to
	// resume after, both keyed by KVFilter, as for a JetStream source.
	End, Start map[string]uint64
	// Name names the source in errors (its vertex id).
	Name string
}

// NewKVSource reads a KV bucket as a JetStream source over its stream with
// the filter KVFilter: first the current entry of every key (the last
// message of each subject, DeliverLastPerSubject), then every update as it
// comes. Each record's key is the entry's key, its value the entry's value
// (empty for a delete), its timestamp the entry's time and its one header
// Platform-Op put or delete (a delete or purge). Its position is the last
// stream sequence delivered, as a JetStream source's: a restore resumes
// after it, with the messages the stream still holds, and messages removed
// after it are values superseded by a later one of the same key, so that no
// sequence gap is reported.
//
// A bounded source reads the entries present at start (deletes are not
// entries: it skips them) up to the stream sequence End fixed. Restored
// from a position before that end, it reads on to the stream's last
// sequence at the restore, so that an entry that changed in between is
// delivered with its new value rather than missed; its positions carry that
// end.
func NewKVSource(ctx context.Context, js jetstream.JetStream, cfg KVSourceConfig) (*JetStreamSource, error) {
	if !ValidBucket(cfg.Bucket) {
		return nil, fmt.Errorf("connector: KV source: bucket %q: want letters, digits, '-' and '_'", cfg.Bucket)
	}
	if cfg.Keys != "" && !ValidKVKeys(cfg.Keys) {
		return nil, fmt.Errorf("connector: KV source on bucket %q: keys %q is not a filter over KV keys", cfg.Bucket, cfg.Keys)
	}
	if err := kvBucketExists(ctx, js, cfg.Bucket); err != nil {
		return nil, err
	}
	filter := KVFilter(cfg.Bucket, cfg.Keys)
	end := cfg.End
	if e, ok := cfg.Start[filter+kvEndSuffix]; ok && cfg.Bounded {
		end = map[string]uint64{filter: max(e, cfg.End[filter])}
	}
	return newJetStreamSource(ctx, js, JetStreamSourceConfig{
		Stream: KVStream(cfg.Bucket), Subjects: []string{filter}, Bounded: cfg.Bounded,
		Subtask: cfg.Subtask, Parallelism: cfg.Parallelism, End: end, Start: cfg.Start, Name: cfg.Name,
	}, &kvRecords{prefix: KVSubject(cfg.Bucket, ""), bounded: cfg.Bounded})
}

// KVBoundedEnd fixes the end of a bounded KV source, as BoundedEnd does a
// JetStream source's.
func KVBoundedEnd(ctx context.Context, js jetstream.JetStream, bucket, keys string) (map[string]uint64, error) {
	if err := kvBucketExists(ctx, js, bucket); err != nil {
		return nil, err
	}
	return BoundedEnd(ctx, js, KVStream(bucket), []string{KVFilter(bucket, keys)})
}

// kvBucketExists returns ErrNoBucket (wrapped) when bucket has no stream.
func kvBucketExists(ctx context.Context, js jetstream.JetStream, bucket string) error {
	_, err := js.Stream(ctx, KVStream(bucket))
	switch {
	case errors.Is(err, jetstream.ErrStreamNotFound):
		return fmt.Errorf("connector: KV bucket %q: %w", bucket, ErrNoBucket)
	case err != nil:
		return fmt.Errorf("connector: KV bucket %q: %w", bucket, err)
	}
	return nil
}

// kvRecords turns the messages of a KV bucket's stream into records.
type kvRecords struct {
	// prefix is "$KV.<bucket>.", what a key's subject starts with.
	prefix  string
	bounded bool
	key     []byte
	headers [1]abi.Header
}

var (
	opName   = []byte(HeaderOp)
	opPut    = []byte(OpPut)
	opDelete = []byte(OpDelete)
)

// append adds the record of msg, stored at ts (milliseconds), to b, and
// reports whether there is one: a bounded source skips deletes.
func (k *kvRecords) append(b *abi.Batch, msg jetstream.Msg, ts int64) bool {
	key, ok := strings.CutPrefix(msg.Subject(), k.prefix)
	if !ok {
		return false
	}
	value, op := msg.Data(), opPut
	if h := msg.Headers(); len(h) > 0 {
		switch h.Get(kvOperation) {
		case kvDel, kvPurge:
			if k.bounded {
				return false
			}
			value, op = nil, opDelete
		}
	}
	k.key = append(k.key[:0], key...)
	k.headers[0] = abi.Header{Name: opName, Value: op}
	b.AppendParts(k.key, value, ts, k.headers[:])
	return true
}

// extendEnd moves the end of bounded filter f, restored before it, to the
// stream's last sequence matching it now (NewKVSource).
func (k *kvRecords) extendEnd(ctx context.Context, st jetstream.Stream, f *filterReader) error {
	last, err := lastSeq(ctx, st, f.name)
	if err != nil {
		return err
	}
	f.end = max(f.end, last)
	return nil
}
