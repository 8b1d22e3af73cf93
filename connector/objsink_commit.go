package connector

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/abi"
)

// ErrObjectExists: an object store sink found an object of the name it
// writes with other content: another job writes under the same prefix.
var ErrObjectExists = errors.New("object exists with other content")

// Metadata keys of the objects an object store sink writes.
const (
	metaWriter     = "writer"
	metaCheckpoint = "checkpoint"
	metaRecords    = "records"
	metaFormat     = "format"
)

// objectIndex is the content of a subtask's index.
type objectIndex struct {
	Writer     string   `json:"writer"`
	Subtask    int      `json:"subtask"`
	Checkpoint int64    `json:"checkpoint"`
	Objects    []string `json:"objects"`
}

// write puts the object of each sealed part, in order, keeping those
// already whole, then the index naming them.
func (s *ObjectSink) write(ctx context.Context, epochs []*Epoch) (ObjectStats, error) {
	var st ObjectStats
	if len(epochs) == 0 {
		return st, nil
	}
	idx := objectIndex{Writer: s.cfg.Writer, Subtask: s.cfg.Subtask}
	for _, e := range epochs {
		written, err := s.putObject(ctx, e)
		if err != nil {
			return st, err
		}
		if written {
			st.Written++
			st.Records += e.Count
		} else {
			st.Kept++
		}
		idx.Checkpoint = max(idx.Checkpoint, e.ID)
		idx.Objects = append(idx.Objects, e.Prefix)
	}
	data, err := json.Marshal(idx)
	if err != nil {
		return st, err
	}
	name := IndexName(s.cfg.Prefix, s.cfg.Subtask)
	if _, err := s.obs.PutBytes(ctx, name, data); err != nil {
		return st, fmt.Errorf("connector: object store sink to bucket %q: put index %q: %w", s.cfg.Bucket, name, err)
	}
	return st, nil
}

// putObject writes the object of part e unless it is there whole already;
// written says whether it wrote it.
func (s *ObjectSink) putObject(ctx context.Context, e *Epoch) (written bool, err error) {
	name := e.Prefix
	info, err := s.obs.GetInfo(ctx, name)
	switch {
	case errors.Is(err, jetstream.ErrObjectNotFound):
	case err != nil:
		return false, fmt.Errorf("connector: object store sink to bucket %q: object %q: %w", s.cfg.Bucket, name, err)
	default:
		// Written before, by this subtask or by the one the part comes
		// from (another parallelism, or the job a savepoint was taken
		// of): the same content is kept.
		h := sha256.New()
		n, err := writeJSONL(h, e)
		if err != nil {
			return false, err
		}
		if info.Size != uint64(n) || info.Digest != jetstream.GetObjectDigestValue(h) {
			return false, fmt.Errorf("connector: object store sink to bucket %q: object %q: %w (by %q, with other content)",
				s.cfg.Bucket, name, ErrObjectExists, info.Metadata[metaWriter])
		}
		return false, nil
	}
	meta := jetstream.ObjectMeta{Name: name, Metadata: map[string]string{
		metaWriter: s.cfg.Writer, metaCheckpoint: strconv.FormatInt(e.ID, 10),
		metaRecords: strconv.FormatInt(e.Count, 10), metaFormat: "jsonl",
	}}
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		_, err := writeJSONL(pw, e)
		pw.CloseWithError(err)
		done <- err
	}()
	_, err = s.obs.Put(ctx, meta, pr)
	// Unblocks the encoder if Put stopped reading early.
	_ = pr.CloseWithError(io.ErrClosedPipe)
	encErr := <-done
	if err == nil && encErr != nil {
		err = encErr
	}
	if err != nil {
		return false, fmt.Errorf("connector: object store sink to bucket %q: put %q: %w", s.cfg.Bucket, name, err)
	}
	return true, nil
}

// writeJSONL writes e's records to w as JSON lines, {"key": the key as a
// string, "value": the value as JSON when it is JSON (compacted), else as a
// string, "timestamp": milliseconds}, and returns the bytes written.
func writeJSONL(w io.Writer, e *Epoch) (int64, error) {
	cw := &countingWriter{w: w}
	bw := bufio.NewWriterSize(cw, blockTarget)
	var (
		line  []byte
		value bytes.Buffer
	)
	err := e.each(func(_ int64, r *abi.Record) error {
		line = appendJSONLine(line[:0], &value, r)
		_, err := bw.Write(line)
		return err
	})
	if err == nil {
		err = bw.Flush()
	}
	return cw.n, err
}

// appendJSONLine appends r's line of an object (writeJSONL) to dst, using
// value for the compacted value.
func appendJSONLine(dst []byte, value *bytes.Buffer, r *abi.Record) []byte {
	dst = append(dst, `{"key":`...)
	dst = appendJSONString(dst, r.Key)
	dst = append(dst, `,"value":`...)
	value.Reset()
	if len(r.Value) > 0 && json.Compact(value, r.Value) == nil {
		dst = append(dst, value.Bytes()...)
	} else {
		dst = appendJSONString(dst, r.Value)
	}
	dst = append(dst, `,"timestamp":`...)
	dst = strconv.AppendInt(dst, r.Timestamp, 10)
	return append(dst, "}\n"...)
}

// countingWriter counts what passes through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// appendJSONString appends b as a JSON string; bytes that are not UTF-8
// become U+FFFD.
func appendJSONString(dst, b []byte) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for len(b) > 0 {
		c := b[0]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c < 0x20:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				dst = append(dst, c)
			}
			b = b[1:]
			continue
		}
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, `\ufffd`...)
		} else {
			dst = append(dst, b[:size]...)
		}
		b = b[size:]
	}
	return append(dst, '"')
}
