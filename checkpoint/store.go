package checkpoint

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"strconv"
	"time"
)

// Errors callers branch on.
var (
	// ErrNotFound: no such checkpoint, or no completed one for a job.
	ErrNotFound = errors.New("checkpoint not found")
	// ErrCorrupt: a checkpoint's metadata does not decode, or a blob is
	// missing or its bytes do not match the size and checksum the metadata
	// recorded (see CorruptError).
	ErrCorrupt = errors.New("corrupt")
)

// Kind tells checkpoints (taken periodically, retained N at a time) from
// savepoints (taken on request, never deleted automatically).
type Kind string

// Kinds of snapshot.
const (
	KindCheckpoint Kind = "checkpoint"
	KindSavepoint  Kind = "savepoint"
)

// Blob names one stored piece of a checkpoint (a task's state, a source's
// positions, a sink's pending commits) with its size and checksum.
type Blob struct {
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// Metadata describes a completed checkpoint. A Store writes it last and
// atomically: blobs without metadata are never read.
type Metadata struct {
	Job      string        `json:"job"`
	ID       int64         `json:"id"`
	Kind     Kind          `json:"kind"`
	Created  time.Time     `json:"created"`
	Duration time.Duration `json:"duration"`
	// Blobs by the name the runtime gave them.
	Blobs map[string]Blob `json:"blobs"`
	// Finished names the tasks that had ended after all their input and
	// committed their output: they have no state and nothing to replay.
	Finished []string `json:"finished,omitempty"`
	// Alignment is the longest time a task spent aligning barriers.
	Alignment time.Duration `json:"alignment,omitempty"`
}

// Size is the checkpoint's total size in bytes.
func (m *Metadata) Size() int64 {
	var n int64
	for _, b := range m.Blobs {
		n += b.Size
	}
	return n
}

// Store keeps checkpoints of many jobs. Implementations are safe for
// concurrent use.
type Store interface {
	// PutBlob stores one blob of checkpoint id and returns its reference.
	PutBlob(ctx context.Context, job string, id int64, name string, data []byte) (Blob, error)
	// PutBlobFrom stores a blob read from r to its end, without holding it
	// in memory.
	PutBlobFrom(ctx context.Context, job string, id int64, name string, r io.Reader) (Blob, error)
	// GetBlob reads a blob and checks it against its reference: a blob
	// that is missing or does not match is a *CorruptError.
	GetBlob(ctx context.Context, job string, id int64, ref Blob) ([]byte, error)
	// Commit writes the metadata, completing the checkpoint.
	Commit(ctx context.Context, m *Metadata) error
	// List returns a job's completed checkpoints and savepoints by id.
	// Checkpoints whose metadata is corrupt are left out of the list and
	// reported in a *ListError returned with it; any other error comes
	// with no list.
	List(ctx context.Context, job string) ([]*Metadata, error)
	// Delete removes a checkpoint, metadata first.
	Delete(ctx context.Context, job string, id int64) error
}

// Latest returns the job's newest completed checkpoint or savepoint whose
// metadata reads, or ErrNotFound.
func Latest(ctx context.Context, s Store, job string) (*Metadata, error) {
	all, err := s.List(ctx, job)
	if err != nil && !errors.Is(err, ErrCorrupt) {
		return nil, err
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("job %s: %w", job, ErrNotFound)
	}
	return all[len(all)-1], nil
}

// Prune deletes the job's oldest checkpoints beyond the newest retain, and
// corrupt ones older than the oldest it keeps; savepoints are kept.
func Prune(ctx context.Context, s Store, job string, retain int) error {
	all, err := s.List(ctx, job)
	var listed *ListError
	if err != nil && !errors.As(err, &listed) {
		return err
	}
	var checkpoints []*Metadata
	for _, m := range all {
		if m.Kind == KindCheckpoint {
			checkpoints = append(checkpoints, m)
		}
	}
	for len(checkpoints) > retain {
		if err := s.Delete(ctx, job, checkpoints[0].ID); err != nil {
			return err
		}
		checkpoints = checkpoints[1:]
	}
	if listed != nil && len(checkpoints) > 0 {
		for _, c := range listed.Corrupt {
			if c.ID < checkpoints[0].ID {
				if err := s.Delete(ctx, job, c.ID); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func blobRef(name string, data []byte) Blob {
	sum := sha256.Sum256(data)
	return Blob{Name: name, Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:])}
}

// hashingReader hashes and counts what is read through it.
type hashingReader struct {
	r io.Reader
	h hash.Hash
	n int64
}

func newHashingReader(r io.Reader) *hashingReader { return &hashingReader{r: r, h: sha256.New()} }

func (hr *hashingReader) Read(p []byte) (int, error) {
	n, err := hr.r.Read(p)
	hr.h.Write(p[:n])
	hr.n += int64(n)
	return n, err
}

func (hr *hashingReader) blob(name string) Blob {
	return Blob{Name: name, Size: hr.n, SHA256: hex.EncodeToString(hr.h.Sum(nil))}
}

func verify(job string, id int64, ref Blob, data []byte) ([]byte, error) {
	got := blobRef(ref.Name, data)
	switch {
	case got.Size != ref.Size:
		return nil, corruptBlob(job, id, ref.Name, fmt.Sprintf("%d bytes, the metadata recorded %d", got.Size, ref.Size))
	case got.SHA256 != ref.SHA256:
		return nil, corruptBlob(job, id, ref.Name, fmt.Sprintf("SHA-256 %s, the metadata recorded %s", got.SHA256, ref.SHA256))
	}
	return data, nil
}

func corruptBlob(job string, id int64, name, reason string) error {
	return &CorruptError{Job: job, ID: id, What: "blob " + name, Reason: reason}
}

// storeError prefixes an error of a Store with what it concerns:
// "checkpoint store: job <job>[ checkpoint <id>][ <what>]: ", where id 0
// stands for all of the job's checkpoints and what is "blob <name>" or
// "metadata".
func storeError(job string, id int64, what string, err error) error {
	prefix := "checkpoint store: job " + job
	if id > 0 {
		prefix += " checkpoint " + strconv.FormatInt(id, 10)
	}
	if what != "" {
		prefix += " " + what
	}
	return fmt.Errorf("%s: %w", prefix, err)
}
