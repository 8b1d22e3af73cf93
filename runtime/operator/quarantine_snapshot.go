package operator

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"sort"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/internal/snapenc"
	"wasmstream.io/platform/state"
)

// quarantineVersion is the version of the quarantine snapshot format: a
// version byte, then per key (in key order) its bytes, failures, first
// error, parked flag, parked count, overflow and kept records.
const quarantineVersion = 1

// StateKind implements Stateful.
func (q *Quarantine) StateKind() string { return "quarantine" }

// Snapshot implements Stateful: the keys that failed and the kept records
// of the parked ones.
func (q *Quarantine) Snapshot(context.Context) (Blob, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	keys := make([]string, 0, len(q.keys))
	for key := range q.keys {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	b := []byte{quarantineVersion}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(keys)))
	for _, key := range keys {
		k := q.keys[key]
		b = snapenc.AppendBytes(b, []byte(key))
		b = binary.LittleEndian.AppendUint32(b, uint32(k.failures))
		b = snapenc.AppendBytes(b, []byte(k.firstError))
		parked := byte(0)
		if k.parked {
			parked = 1
		}
		b = append(b, parked)
		b = binary.LittleEndian.AppendUint64(b, uint64(k.count))
		b = binary.LittleEndian.AppendUint64(b, uint64(k.overflow))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(k.records)))
		for i := range k.records {
			b = appendRecord(b, &k.records[i])
		}
	}
	return Blob{Data: b}, nil
}

func appendRecord(b []byte, r *abi.Record) []byte {
	b = snapenc.AppendBytes(b, r.Key)
	b = snapenc.AppendBytes(b, r.Value)
	b = binary.LittleEndian.AppendUint64(b, uint64(r.Timestamp))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(r.Headers)))
	for _, h := range r.Headers {
		b = snapenc.AppendBytes(b, h.Name)
		b = snapenc.AppendBytes(b, h.Value)
	}
	return b
}

// Restore implements Stateful: the keys of the subtask's key groups, from
// the snapshots of every former subtask.
func (q *Quarantine) Restore(_ context.Context, srcs []io.Reader, maxParallelism int, keyGroups state.Range) error {
	q.init()
	for _, src := range srcs {
		data, err := io.ReadAll(src)
		if err != nil {
			return fmt.Errorf("operator[%s]: quarantine: %w", q.Vertex, err)
		}
		keys, err := decodeQuarantine(data)
		if err != nil {
			return fmt.Errorf("operator[%s]: quarantine snapshot: %w", q.Vertex, err)
		}
		for key, k := range keys {
			if !keyGroups.Contains(state.KeyGroup([]byte(key), maxParallelism)) {
				continue
			}
			q.keys[key] = k
			q.used += k.bytes
			if k.parked {
				q.parkedKeys++
			}
		}
	}
	return nil
}

// Minimal encoded sizes, which bound what a count in a snapshot may claim.
const (
	minKeyBytes    = 4 + 4 + 4 + 1 + 8 + 8 + 4
	minRecordBytes = 4 + 4 + 8 + 4
	minHeaderBytes = 4 + 4
)

// decodeQuarantine reads a quarantine snapshot.
func decodeQuarantine(data []byte) (map[string]*quarantineKey, error) {
	d := &snapenc.Decoder{B: data}
	if v := d.U8(); d.Err == nil && v != quarantineVersion {
		return nil, fmt.Errorf("unknown version %d", v)
	}
	n := int(d.U32())
	if d.Err == nil && n > len(d.B)/minKeyBytes {
		return nil, fmt.Errorf("%d keys in %d bytes", n, len(d.B))
	}
	keys := map[string]*quarantineKey{}
	for range n {
		if d.Err != nil {
			break
		}
		key := string(d.Bytes())
		k := &quarantineKey{failures: int(d.U32()), firstError: string(d.Bytes()), parked: d.U8() == 1,
			count: d.I64(), overflow: d.I64()}
		recs := int(d.U32())
		if d.Err == nil && recs > len(d.B)/minRecordBytes {
			return nil, fmt.Errorf("key %q: %d records in %d bytes", key, recs, len(d.B))
		}
		for range recs {
			r, err := decodeRecord(d)
			if err != nil {
				return nil, fmt.Errorf("key %q: %w", key, err)
			}
			k.records = append(k.records, r)
			k.bytes += recordSize(&r)
		}
		if _, dup := keys[key]; dup && d.Err == nil {
			return nil, fmt.Errorf("key %q twice", key)
		}
		keys[key] = k
	}
	if d.Err != nil {
		return nil, d.Err
	}
	if len(d.B) != 0 {
		return nil, fmt.Errorf("%d bytes after the last key", len(d.B))
	}
	return keys, nil
}

func decodeRecord(d *snapenc.Decoder) (abi.Record, error) {
	r := abi.Record{Key: d.Bytes(), Value: d.Bytes(), Timestamp: d.I64()}
	nh := int(d.U32())
	if d.Err == nil && nh > len(d.B)/minHeaderBytes {
		return r, fmt.Errorf("%d headers in %d bytes", nh, len(d.B))
	}
	for range nh {
		r.Headers = append(r.Headers, abi.Header{Name: d.Bytes(), Value: d.Bytes()})
	}
	if d.Err != nil {
		return r, d.Err
	}
	r = copyRecord(&r)
	return r, nil
}
