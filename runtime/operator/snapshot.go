package operator

import (
	"context"
	"io"
)

// Blob is a blob a snapshot produced, not yet stored: bytes, a
// reader, or a writer function. Release runs once it is stored (or not).
type Blob struct {
	Name    string
	Data    []byte
	Reader  io.Reader
	Write   func(ctx context.Context, w io.Writer) error
	Release func()
	// InFlight: the blob is in-flight data of an unaligned checkpoint.
	InFlight bool
}
