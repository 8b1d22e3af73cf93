package checkpoint

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
)

// CorruptError is a checkpoint that cannot be used: its metadata does not
// decode or describes no valid checkpoint, or one of its blobs is missing or
// does not match the size and SHA-256 the metadata recorded. It wraps
// ErrCorrupt. Another attempt would fail the same way, so a restore goes
// back to an older checkpoint instead.
type CorruptError struct {
	Job string
	ID  int64
	// What is "metadata" or "blob <name>".
	What string
	// Reason says what is wrong.
	Reason string
}

func (e *CorruptError) Error() string {
	return storeError(e.Job, e.ID, e.What, fmt.Errorf("%w: %s", ErrCorrupt, e.Reason)).Error()
}

// Unwrap returns ErrCorrupt.
func (e *CorruptError) Unwrap() error { return ErrCorrupt }

// ListError is the error List returns beside the checkpoints it could read
// when the metadata of others is corrupt: the list then holds every
// checkpoint but those. It wraps each CorruptError, hence ErrCorrupt.
type ListError struct {
	Corrupt []*CorruptError
}

func (e *ListError) Error() string {
	msgs := make([]string, len(e.Corrupt))
	for i, c := range e.Corrupt {
		msgs[i] = c.Error()
	}
	return strings.Join(msgs, "; ")
}

// Unwrap returns the corrupt checkpoints' errors.
func (e *ListError) Unwrap() []error {
	out := make([]error, len(e.Corrupt))
	for i, c := range e.Corrupt {
		out[i] = c
	}
	return out
}

// listResult is what List returns: the checkpoints read, and a *ListError
// when some were corrupt.
func listResult(out []*Metadata, corrupt []*CorruptError) ([]*Metadata, error) {
	if len(corrupt) > 0 {
		return out, &ListError{Corrupt: corrupt}
	}
	return out, nil
}

// DecodeMetadata reads the _metadata of checkpoint id of job and checks
// that it describes one: the job and id it names are those it is stored
// under, its kind is known, and every blob has a valid name, a size that is
// not negative and a SHA-256 of 64 hex digits. The error is a
// *CorruptError.
func DecodeMetadata(job string, id int64, data []byte) (*Metadata, error) {
	bad := func(format string, args ...any) error {
		return &CorruptError{Job: job, ID: id, What: "metadata", Reason: fmt.Sprintf(format, args...)}
	}
	var m Metadata
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, bad("%d bytes that do not decode: %v", len(data), err)
	}
	switch {
	case m.Job != job:
		return nil, bad("names job %q", m.Job)
	case m.ID != id:
		return nil, bad("names checkpoint %d", m.ID)
	case m.Kind != KindCheckpoint && m.Kind != KindSavepoint:
		return nil, bad("kind %q: want %s or %s", m.Kind, KindCheckpoint, KindSavepoint)
	}
	for name, b := range m.Blobs {
		if b.Name != name {
			return nil, bad("blob %q is listed as %q", b.Name, name)
		}
		if err := checkName(name); err != nil {
			return nil, bad("blob %q: %v", name, err)
		}
		if b.Size < 0 {
			return nil, bad("blob %q: size %d", name, b.Size)
		}
		if sum, err := hex.DecodeString(b.SHA256); err != nil || len(sum) != 32 {
			return nil, bad("blob %q: SHA-256 %q is not 64 hex digits", name, b.SHA256)
		}
	}
	return &m, nil
}
