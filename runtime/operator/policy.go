package operator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/host"
)

// On-error policies of the job spec's on_udf_error.
const (
	OnErrorFail       = "fail"
	OnErrorSkip       = "skip"
	OnErrorDeadLetter = "dead_letter"
)

// Headers the platform adds to a dead-lettered record.
const (
	HeaderError    = "Platform-Error"
	HeaderOperator = "Platform-Operator"
)

// RecordError is a record that failed in a UDF (or in a built-in record
// function such as key_by.field) under on_udf_error: fail. It fails the job.
type RecordError struct {
	Vertex    string
	Key       []byte
	Timestamp int64
	Err       error
}

func (e *RecordError) Error() string {
	return fmt.Sprintf("operator[%s]: record (key %q, timestamp %d): %v", e.Vertex, e.Key, e.Timestamp, e.Err)
}

func (e *RecordError) Unwrap() error { return e.Err }

// ErrorCounts are a vertex's failed records, written by its ErrorPolicy.
type ErrorCounts struct {
	UDFErrors    atomic.Int64
	Skipped      atomic.Int64
	DeadLettered atomic.Int64
}

// ErrorPolicy applies on_udf_error to one failed record: fail the job, skip
// and count it, publish it with the error to the dead-letter subject, or,
// under quarantine, count it against its key (quarantine.go).
type ErrorPolicy struct {
	Mode       string
	Vertex     string
	DeadLetter Stage
	Counts     *ErrorCounts
	Log        *slog.Logger
	// Report, when set, takes each failed record (after counting it) in
	// place of what Mode does with it; Mode still decides whether a failed
	// call is narrowed down to its failing inputs (Isolate). An error it
	// returns fails the operator. rec is the failed input: for a record
	// of the batch an operator's Process was given (record functions,
	// process, watermark and session gap functions), a pointer into that
	// batch. Jobs leave it nil; platform udf test prints failed records
	// with it.
	Report func(ctx context.Context, rec *abi.Record, cause error) error
	// Quarantine takes the failed records under on_udf_error: quarantine
	// of an operator after a key_by; without one (the operator is not
	// keyed) they are dead-lettered.
	Quarantine *Quarantine
	headers    []abi.Header
	batch      [1]abi.Record
}

func (p *ErrorPolicy) RecordFailed(ctx context.Context, rec *abi.Record, cause error) error {
	p.Counts.UDFErrors.Add(1)
	if p.Report != nil {
		return p.Report(ctx, rec, cause)
	}
	switch p.Mode {
	case OnErrorSkip:
		p.Counts.Skipped.Add(1)
		p.Log.Debug("record skipped", "error", cause)
		return nil
	case OnErrorQuarantine, OnErrorDeadLetter:
		if p.Quarantine != nil {
			return p.Quarantine.Failed(ctx, rec, cause)
		}
		p.headers = append(p.headers[:0], rec.Headers...)
		p.headers = append(p.headers,
			abi.Header{Name: []byte(HeaderError), Value: headerValue(cause.Error())},
			abi.Header{Name: []byte(HeaderOperator), Value: []byte(p.Vertex)})
		p.batch[0] = abi.Record{Key: rec.Key, Value: rec.Value, Timestamp: rec.Timestamp, Headers: p.headers}
		if err := p.DeadLetter.Process(ctx, p.batch[:]); err != nil {
			return fmt.Errorf("dead letter: %w", err)
		}
		p.Counts.DeadLettered.Add(1)
		return nil
	default:
		return &RecordError{Vertex: p.Vertex, Key: append([]byte(nil), rec.Key...), Timestamp: rec.Timestamp, Err: cause}
	}
}

// maxErrorHeader bounds the error text carried in a dead letter's header.
const maxErrorHeader = 2048

// headerValue makes text fit a NATS header value: one line, bounded.
func headerValue(text string) []byte {
	if len(text) > maxErrorHeader {
		text = text[:maxErrorHeader]
	}
	v := []byte(text)
	for i, c := range v {
		if c == '\r' || c == '\n' || c < 0x20 && c != '\t' {
			v[i] = ' '
		}
	}
	return v
}

// Isolate runs call over inputs lo..hi-1 (records or groups). When the call
// fails as a whole (a trap, a deadline or a malformed answer: a
// *host.CallError), it finds the failing inputs: a single input goes to
// failed; several fail the job under on_udf_error: fail, and are otherwise
// run again one by one, so that only the poison ones go to failed and the
// others are neither lost nor duplicated. Any other error is returned as it
// is. Stateful functions must not be isolated: a failed call may have
// changed state that running its inputs again would change twice.
func (p *ErrorPolicy) Isolate(lo, hi int, call func(lo, hi int) error, failed func(i int, err error) error) error {
	err := call(lo, hi)
	if err == nil || !failedCall(err) {
		return err
	}
	if hi-lo == 1 {
		return failed(lo, err)
	}
	if p.Mode == OnErrorFail {
		return fmt.Errorf("operator[%s]: %w", p.Vertex, err)
	}
	for i := lo; i < hi; i++ {
		if err := p.Isolate(i, i+1, call, failed); err != nil {
			return err
		}
	}
	return nil
}

// failedCall reports whether err is a call that failed inside the guest. It
// is its own function so that the error's target is allocated only on the
// error path.
func failedCall(err error) bool {
	var callErr *host.CallError
	return errors.As(err, &callErr)
}
