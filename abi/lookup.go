package abi

import (
	"encoding/binary"
	"fmt"
)

// Async lookups run in two calls, so that no call waits for the network: a
// lookup_request function answers each input record with the lookups it
// needs (TagRecord entries whose value is an encoded LookupRequest); the
// host issues them concurrently and, once a record's lookups have all
// completed, a lookup_result function gets the record with its results (a
// lookup result frame) and answers it as a flat_map does. docs/ABI.md, Async
// lookups, is the spec.
const (
	KindLookupRequest Kind = "lookup_request"
	KindLookupResult  Kind = "lookup_result"
)

// LookupKind says what a lookup request reads.
type LookupKind uint8

// Lookup kinds.
const (
	// LookupKV reads a key of a NATS KV bucket: Target is the bucket, Key
	// the key.
	LookupKV LookupKind = 1
	// LookupHTTP is an HTTP GET of the URL in Target; Key is empty. The
	// URL's host must be on the job's lookups.http.allow list.
	LookupHTTP LookupKind = 2
)

func (k LookupKind) String() string {
	switch k {
	case LookupKV:
		return "kv"
	case LookupHTTP:
		return "http"
	}
	return fmt.Sprintf("lookup kind %d", uint8(k))
}

// MaxLookupsPerRecord bounds the lookups one record may ask for, so that a
// record's in-flight work is bounded too.
const MaxLookupsPerRecord = 64

// LookupRequest is one lookup a record asks for. Decoded slices alias the
// encoded bytes.
type LookupRequest struct {
	Kind   LookupKind
	Target []byte
	Key    []byte
}

// AppendLookupRequest encodes a request as the value of a lookup_request
// function's TagRecord entry: u8 kind | u32 length | target | u32 length |
// key.
func AppendLookupRequest(dst []byte, r *LookupRequest) []byte {
	dst = append(dst, byte(r.Kind))
	dst = appendBytes(dst, r.Target)
	return appendBytes(dst, r.Key)
}

// ParseLookupRequest decodes an encoded request: a known kind, a non-empty
// target, no key for HTTP, a key for KV, and no bytes after it.
func ParseLookupRequest(b []byte) (LookupRequest, error) {
	r := reader{buf: b}
	req := LookupRequest{Kind: LookupKind(r.u8())}
	req.Target = r.bytes()
	req.Key = r.bytes()
	switch {
	case r.err != nil:
		return LookupRequest{}, fmt.Errorf("lookup request: %w", r.err)
	case r.off != len(b):
		return LookupRequest{}, fmt.Errorf("lookup request: %w", malformed(r.off, "%d bytes after the request", len(b)-r.off))
	case req.Kind != LookupKV && req.Kind != LookupHTTP:
		return LookupRequest{}, fmt.Errorf("lookup request: unknown kind %d (want 1 for kv, 2 for http)", uint8(req.Kind))
	case len(req.Target) == 0:
		return LookupRequest{}, fmt.Errorf("lookup request: empty %s", targetName(req.Kind))
	case req.Kind == LookupKV && len(req.Key) == 0:
		return LookupRequest{}, fmt.Errorf("lookup request: kv lookup in bucket %q without a key", req.Target)
	case req.Kind == LookupHTTP && len(req.Key) != 0:
		return LookupRequest{}, fmt.Errorf("lookup request: an http lookup has no key")
	}
	return req, nil
}

func targetName(k LookupKind) string {
	if k == LookupKV {
		return "bucket"
	}
	return "url"
}

// LookupStatus is how a lookup ended, as the lookup_result function sees it.
// Lookups that fail (a timeout, a refused connection, an HTTP status other
// than 2xx and 404) never reach it: the host retries them and then fails the
// record under the job's on_udf_error.
type LookupStatus uint8

// Lookup statuses.
const (
	// LookupFound: the value is the KV entry's value or the HTTP body.
	LookupFound LookupStatus = 0
	// LookupAbsent: no such KV key (or it was deleted), or HTTP 404.
	LookupAbsent LookupStatus = 1
)

// LookupResult is one lookup's result, in the order of the record's
// requests.
type LookupResult struct {
	Status LookupStatus
	Value  []byte
}

// AppendLookupInput appends one input of a lookup result frame (started by
// AppendInputHeader): the record, then u32 count | (u8 status | u32 length |
// value)* of its results.
func AppendLookupInput(dst []byte, r *Record, results []LookupResult) []byte {
	dst = AppendRecord(dst, r)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(results)))
	for i := range results {
		dst = append(dst, byte(results[i].Status))
		dst = appendBytes(dst, results[i].Value)
	}
	return dst
}

// LookupReader decodes a lookup result frame input by input.
type LookupReader struct {
	r       reader
	count   uint32
	read    uint32
	results []LookupResult
}

// Reset starts decoding frame.
func (lr *LookupReader) Reset(frame []byte) error {
	lr.r = reader{buf: frame}
	lr.count = lr.r.u32()
	lr.read = 0
	return lr.r.err
}

// Count is the number of inputs the frame declares.
func (lr *LookupReader) Count() uint32 { return lr.count }

// Next decodes the next input into rec and returns its results, which like
// rec alias the frame and are valid until the next call. It returns false
// at the end of the frame or on error; Err tells which.
func (lr *LookupReader) Next(rec *Record) ([]LookupResult, bool) {
	if lr.read >= lr.count || lr.r.err != nil {
		return nil, false
	}
	rec.Key = lr.r.bytes()
	rec.Value = lr.r.bytes()
	rec.Timestamp = int64(lr.r.u64())
	rec.Headers = lr.r.headers(rec.Headers[:0])
	n := lr.r.u32()
	// Each result takes at least 5 bytes: refuse counts the frame cannot
	// hold before allocating for them.
	if lr.r.err == nil && uint64(n)*5 > uint64(len(lr.r.buf)-lr.r.off) {
		lr.r.err = malformed(lr.r.off-4, "result count %d exceeds the frame", n)
	}
	lr.results = lr.results[:0]
	for i := uint32(0); i < n && lr.r.err == nil; i++ {
		st := LookupStatus(lr.r.u8())
		v := lr.r.bytes()
		if lr.r.err == nil && st != LookupFound && st != LookupAbsent {
			lr.r.err = malformed(lr.r.off, "lookup status %d", st)
		}
		lr.results = append(lr.results, LookupResult{Status: st, Value: v})
	}
	if lr.r.err != nil {
		return nil, false
	}
	lr.read++
	return lr.results, true
}

// Err is the first decoding error, including a frame that ends before its
// declared count or has bytes after it.
func (lr *LookupReader) Err() error {
	if lr.r.err != nil {
		return lr.r.err
	}
	if lr.read < lr.count {
		return malformed(lr.r.off, "frame ends after %d of %d inputs", lr.read, lr.count)
	}
	if lr.r.off != len(lr.r.buf) {
		return malformed(lr.r.off, "%d bytes after the last input", len(lr.r.buf)-lr.r.off)
	}
	return nil
}
