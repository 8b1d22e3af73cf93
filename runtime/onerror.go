package runtime

import (
	"context"
	"fmt"
	"log/slog"

	"wasmstream.io/platform/abi"
)

// On-error policies of the job spec's on_udf_error.
const (
	onErrorFail       = "fail"
	onErrorSkip       = "skip"
	onErrorDeadLetter = "dead_letter"
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

// errorPolicy applies on_udf_error to one failed record: fail the job, skip
// and count it, or publish it with the error to the dead-letter subject.
type errorPolicy struct {
	mode    string
	vertex  string
	dlq     stage
	c       *counters
	log     *slog.Logger
	headers []abi.Header
	batch   [1]abi.Record
}

func (p *errorPolicy) recordFailed(ctx context.Context, rec *abi.Record, cause error) error {
	p.c.udfErrors.Add(1)
	switch p.mode {
	case onErrorSkip:
		p.c.skipped.Add(1)
		p.log.Debug("record skipped", "error", cause)
		return nil
	case onErrorDeadLetter:
		p.headers = append(p.headers[:0], rec.Headers...)
		p.headers = append(p.headers,
			abi.Header{Name: []byte(HeaderError), Value: headerValue(cause.Error())},
			abi.Header{Name: []byte(HeaderOperator), Value: []byte(p.vertex)})
		p.batch[0] = abi.Record{Key: rec.Key, Value: rec.Value, Timestamp: rec.Timestamp, Headers: p.headers}
		if err := p.dlq.process(ctx, p.batch[:]); err != nil {
			return fmt.Errorf("dead letter: %w", err)
		}
		p.c.deadLettered.Add(1)
		return nil
	default:
		return &RecordError{Vertex: p.vertex, Key: append([]byte(nil), rec.Key...), Timestamp: rec.Timestamp, Err: cause}
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
