package connector

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/abi"
)

// SkipCommitted prepares an object store sink restored from an older
// checkpoint than the newest (the newer ones corrupt), as TxSink's does:
// the objects this subtask (its Writer) wrote for checkpoints after after
// stay, and the replay of the input since the restored checkpoint produces
// their records again, under other names. It reads those objects and from
// then on Write drops each record whose line equals one of theirs, as many
// times as they hold it, so that the replay adds only what they do not.
// It returns the number of lines found. It must be called before the first
// Write, after KeepSkipping when both apply. More lines than the staging
// budget can remember (Budget / 48 bytes) fail with ErrReplayBudget.
func (s *ObjectSink) SkipCommitted(ctx context.Context, after int64) (int64, error) {
	infos, err := s.obs.List(ctx)
	if errors.Is(err, jetstream.ErrNoObjectsFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("connector: object store sink to bucket %q: list: %w", s.cfg.Bucket, err)
	}
	r := s.replay
	if r == nil {
		r = newReplay(s.cfg.Budget / replayEntryBytes)
	}
	before := r.left
	for _, info := range infos {
		if info.Metadata[metaWriter] != s.cfg.Writer {
			continue
		}
		if id, err := strconv.ParseInt(info.Metadata[metaCheckpoint], 10, 64); err != nil || id <= after {
			continue
		}
		if err := s.rememberObject(ctx, r, info.Name, after); err != nil {
			return 0, err
		}
	}
	if r.left > 0 {
		s.replay = r
	}
	return r.left - before, nil
}

// rememberObject adds the lines of object name to r.
func (s *ObjectSink) rememberObject(ctx context.Context, r *Replay, name string, after int64) error {
	obj, err := s.obs.Get(ctx, name)
	if err != nil {
		return fmt.Errorf("connector: object store sink to bucket %q: read back %q: %w", s.cfg.Bucket, name, err)
	}
	defer obj.Close()
	br := bufio.NewReaderSize(obj, blockTarget)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 && !r.rememberLine(line) {
			return fmt.Errorf("connector: object store sink to bucket %q: %w: more than %d records in objects of checkpoints after %d (budget %d bytes)",
				s.cfg.Bucket, ErrReplayBudget, r.max, after, s.cfg.Budget)
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("connector: object store sink to bucket %q: read back %q: %w", s.cfg.Bucket, name, err)
		}
	}
}

// KeepSkipping makes a sink restored from a checkpoint taken during an
// earlier fallback's replay go on dropping the lines that replay had not
// produced again yet (DecodeSinkState), as TxSink's does.
func (s *ObjectSink) KeepSkipping(states []*Replay) (int64, error) {
	r := s.replay
	if r == nil {
		r = newReplay(s.cfg.Budget / replayEntryBytes)
	}
	n, err := r.merge(states)
	if err != nil {
		return 0, fmt.Errorf("connector: object store sink to bucket %q: %w (budget %d bytes)", s.cfg.Bucket, err, s.cfg.Budget)
	}
	if r.left > 0 {
		s.replay = r
	}
	return n, nil
}

// Replayed is the number of records Write dropped as committed before a
// fallback, and Unreplayed those it still expects.
func (s *ObjectSink) Replayed() int64 { return s.dropped }

// Unreplayed: see Replayed.
func (s *ObjectSink) Unreplayed() int64 {
	if s.replay == nil {
		return 0
	}
	return s.replay.left
}

// dropReplayed reports whether Write drops rec as one the replay expects.
func (s *ObjectSink) dropReplayed(rec *abi.Record) bool {
	s.line = appendJSONLine(s.line[:0], &s.value, rec)
	if !s.replay.takeLine(s.line) {
		return false
	}
	s.dropped++
	if s.replay.left == 0 {
		s.replay = nil
	}
	return true
}
