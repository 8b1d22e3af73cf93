package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/internal/jsplace"
)

// registryBucket is the JetStream key-value bucket that keeps the job
// registry, so that a restarted platform resumes the jobs that were running.
const registryBucket = "PLATFORM_JOBS"

// jobRecord is what the registry keeps of a job: enough to run it again.
type jobRecord struct {
	ID      string     `json:"id"`
	Name    string     `json:"name"`
	Spec    []byte     `json:"spec"`
	Created time.Time  `json:"created"`
	State   JobState   `json:"state"`
	Failure string     `json:"failure,omitempty"`
	Ended   *time.Time `json:"ended,omitempty"`
	// Ends fixes each bounded JetStream source's end (by source id, then
	// subject filter) when the job first starts, so that a resumed job
	// ends at the same place.
	Ends map[string]map[string]uint64 `json:"ends,omitempty"`
	// FromSavepoint is the savepoint the job was submitted from, restored
	// until the job has a checkpoint of its own.
	FromSavepoint    string `json:"from_savepoint,omitempty"`
	AllowNonRestored bool   `json:"allow_non_restored_state,omitempty"`
	// Modules are the module references of the spec with the ids they
	// resolved to at submission, so that a resumed job runs the same
	// modules whatever versions its names have gained since.
	Modules []JobModule `json:"modules,omitempty"`
	// Versions is the job's version history once it was upgraded or
	// rescaled (versions.go); Spec and Modules are its committed
	// version's.
	Versions []VersionInfo `json:"versions,omitempty"`
	// Canary is the canary the job runs on part of its key space, if
	// any: Spec and Modules run on the rest.
	Canary *canaryVersion `json:"canary,omitempty"`
	// Restarts counts the job's restarts after failures on every worker
	// that ran it, so that the count survives the job's moves.
	Restarts int64 `json:"restarts,omitempty"`
}

// info is what the API shows of a job only the registry has.
func (rec *jobRecord) info() JobInfo {
	return JobInfo{ID: rec.ID, Name: rec.Name, State: rec.State, Created: rec.Created, Ended: rec.Ended, Failure: rec.Failure, Modules: rec.Modules, Versions: rec.Versions, Restarts: rec.Restarts}
}

// registry persists job records in JetStream KV. Writes come from the
// manager and the job supervisors; the KV client is safe for concurrent use.
type registry struct {
	kv jetstream.KeyValue
}

func openRegistry(ctx context.Context, js jetstream.JetStream, replicas int) (*registry, error) {
	kv, err := jsplace.Create(ctx, func(ctx context.Context) (jetstream.KeyValue, error) {
		return js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket: registryBucket, Description: "platform job registry", Storage: jetstream.FileStorage, History: 1, Replicas: replicas,
		})
	})
	if err != nil {
		return nil, fmt.Errorf("job registry: %w", err)
	}
	return &registry{kv: kv}, nil
}

func (r *registry) put(ctx context.Context, rec *jobRecord) error {
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if _, err := r.kv.Put(ctx, rec.ID, data); err != nil {
		return fmt.Errorf("job registry: job %s: %w", rec.ID, err)
	}
	return nil
}

// delete removes a job's record.
func (r *registry) delete(ctx context.Context, id string) error {
	if err := r.kv.Purge(ctx, id); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		return fmt.Errorf("job registry: job %s: %w", id, err)
	}
	return nil
}

// all returns every job record by creation time.
func (r *registry) all(ctx context.Context) ([]*jobRecord, error) {
	keys, err := r.kv.Keys(ctx)
	if errors.Is(err, jetstream.ErrNoKeysFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("job registry: %w", err)
	}
	var recs []*jobRecord
	for _, k := range keys {
		entry, err := r.kv.Get(ctx, k)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("job registry: job %s: %w", k, err)
		}
		var rec jobRecord
		if err := json.Unmarshal(entry.Value(), &rec); err != nil {
			return nil, fmt.Errorf("job registry: job %s: %w", k, err)
		}
		recs = append(recs, &rec)
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].Created.Before(recs[j].Created) })
	return recs, nil
}

// get reads one job's record and its revision.
func (r *registry) get(ctx context.Context, id string) (*jobRecord, uint64, error) {
	entry, err := r.kv.Get(ctx, id)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, 0, fmt.Errorf("job %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("job registry: job %s: %w", id, err)
	}
	var rec jobRecord
	if err := json.Unmarshal(entry.Value(), &rec); err != nil {
		return nil, 0, fmt.Errorf("job registry: job %s: %w", id, err)
	}
	return &rec, entry.Revision(), nil
}

// errRecordMoved: a record changed since the revision its writer last
// wrote, so another worker owns the job now.
var errRecordMoved = errors.New("the job's record was written by another worker")

// update writes a record with compare-and-set on rev, the revision its
// writer last wrote (0: the record must not exist), and returns the new
// revision. In cluster mode only the job's owner writes its record, so a
// conflict means ownership moved (errRecordMoved).
func (r *registry) update(ctx context.Context, rec *jobRecord, rev uint64) (uint64, error) {
	data, err := json.Marshal(rec)
	if err != nil {
		return 0, err
	}
	if rev == 0 {
		rev, err = r.kv.Create(ctx, rec.ID, data)
	} else {
		rev, err = r.kv.Update(ctx, rec.ID, data, rev)
	}
	if errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		return 0, fmt.Errorf("job registry: job %s: %w", rec.ID, errRecordMoved)
	}
	if err != nil {
		return 0, fmt.Errorf("job registry: job %s: %w", rec.ID, err)
	}
	return rev, nil
}

// watch calls saw with every record as it changes (nil when removed) until
// ctx ends, starting with the current ones.
func (r *registry) watch(ctx context.Context, log *slog.Logger, saw func(id string, rec *jobRecord)) error {
	w, err := r.kv.WatchAll(ctx)
	if err != nil {
		return fmt.Errorf("job registry: watch: %w", err)
	}
	go func() {
		defer func() { _ = w.Stop() }()
		for {
			select {
			case <-ctx.Done():
				return
			case e, ok := <-w.Updates():
				if !ok {
					return
				}
				if e == nil {
					continue
				}
				if e.Operation() != jetstream.KeyValuePut {
					saw(e.Key(), nil)
					continue
				}
				var rec jobRecord
				if err := json.Unmarshal(e.Value(), &rec); err != nil {
					log.Warn("unreadable job record", "job", e.Key(), "error", err)
					continue
				}
				saw(e.Key(), &rec)
			}
		}
	}()
	return nil
}
