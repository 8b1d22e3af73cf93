package checkpoint

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/internal/jsplace"
)

// ObjectStore keeps checkpoints in a JetStream object store bucket, so that
// several platform processes can share them: objects <job>/<id>/<blob> and
// <job>/<id>/_metadata, written last. An object store put is atomic (the
// object's info is published after its chunks), so metadata is either whole
// or absent.
type ObjectStore struct {
	obs jetstream.ObjectStore
}

// NewObjectStore opens or creates the bucket, with replicas copies on a
// NATS cluster (1 when less).
func NewObjectStore(ctx context.Context, js jetstream.JetStream, bucket string, replicas int) (*ObjectStore, error) {
	obs, err := jsplace.Create(ctx, func(ctx context.Context) (jetstream.ObjectStore, error) {
		return js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{
			Bucket: bucket, Description: "platform checkpoints and savepoints", Storage: jetstream.FileStorage, Replicas: max(replicas, 1),
		})
	})
	if err != nil {
		return nil, fmt.Errorf("checkpoint store: bucket %s: %w", bucket, err)
	}
	return &ObjectStore{obs: obs}, nil
}

func objectName(job string, id int64, name string) string {
	return job + "/" + strconv.FormatInt(id, 10) + "/" + name
}

// PutBlob implements Store.
func (o *ObjectStore) PutBlob(ctx context.Context, job string, id int64, name string, data []byte) (Blob, error) {
	if err := checkName(name); err != nil {
		return Blob{}, storeError(job, id, "blob "+name, err)
	}
	if _, err := o.obs.PutBytes(ctx, objectName(job, id, name), data); err != nil {
		return Blob{}, storeError(job, id, "blob "+name, err)
	}
	return blobRef(name, data), nil
}

// PutBlobFrom implements Store.
func (o *ObjectStore) PutBlobFrom(ctx context.Context, job string, id int64, name string, r io.Reader) (Blob, error) {
	if err := checkName(name); err != nil {
		return Blob{}, storeError(job, id, "blob "+name, err)
	}
	hr := newHashingReader(r)
	if _, err := o.obs.Put(ctx, jetstream.ObjectMeta{Name: objectName(job, id, name)}, hr); err != nil {
		return Blob{}, storeError(job, id, "blob "+name, err)
	}
	return hr.blob(name), nil
}

// GetBlob implements Store.
func (o *ObjectStore) GetBlob(ctx context.Context, job string, id int64, ref Blob) ([]byte, error) {
	data, err := o.obs.GetBytes(ctx, objectName(job, id, ref.Name))
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return nil, corruptBlob(job, id, ref.Name, "missing")
	}
	if errors.Is(err, jetstream.ErrDigestMismatch) {
		return nil, corruptBlob(job, id, ref.Name, err.Error())
	}
	if err != nil {
		return nil, storeError(job, id, "blob "+ref.Name, err)
	}
	return verify(job, id, ref, data)
}

// Commit implements Store.
func (o *ObjectStore) Commit(ctx context.Context, m *Metadata) error {
	data, err := json.Marshal(m)
	if err != nil {
		return storeError(m.Job, m.ID, "metadata", err)
	}
	if _, err := o.obs.PutBytes(ctx, objectName(m.Job, m.ID, metadataFile), data); err != nil {
		return storeError(m.Job, m.ID, "metadata", err)
	}
	return nil
}

// List implements Store.
func (o *ObjectStore) List(ctx context.Context, job string) ([]*Metadata, error) {
	infos, err := o.obs.List(ctx)
	if errors.Is(err, jetstream.ErrNoObjectsFound) {
		return nil, nil
	}
	if err != nil {
		return nil, storeError(job, 0, "", err)
	}
	var (
		out     []*Metadata
		corrupt []*CorruptError
	)
	prefix := job + "/"
	for _, info := range infos {
		rest, ok := strings.CutPrefix(info.Name, prefix)
		if !ok || !strings.HasSuffix(rest, "/"+metadataFile) {
			continue
		}
		id, err := strconv.ParseInt(strings.TrimSuffix(rest, "/"+metadataFile), 10, 64)
		if err != nil || id < 1 {
			continue
		}
		data, err := o.obs.GetBytes(ctx, info.Name)
		if errors.Is(err, jetstream.ErrObjectNotFound) {
			continue // deleted since the listing
		}
		if errors.Is(err, jetstream.ErrDigestMismatch) {
			corrupt = append(corrupt, &CorruptError{Job: job, ID: id, What: "metadata", Reason: err.Error()})
			continue
		}
		if err != nil {
			return nil, storeError(job, id, "metadata", err)
		}
		m, err := DecodeMetadata(job, id, data)
		if err != nil {
			corrupt = append(corrupt, err.(*CorruptError))
			continue
		}
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	sort.Slice(corrupt, func(i, j int) bool { return corrupt[i].ID < corrupt[j].ID })
	return listResult(out, corrupt)
}

// Delete implements Store.
func (o *ObjectStore) Delete(ctx context.Context, job string, id int64) error {
	prefix := job + "/" + strconv.FormatInt(id, 10) + "/"
	if err := o.obs.Delete(ctx, prefix+metadataFile); err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
		return storeError(job, id, "metadata", err)
	}
	infos, err := o.obs.List(ctx)
	if errors.Is(err, jetstream.ErrNoObjectsFound) {
		return nil
	}
	if err != nil {
		return storeError(job, id, "", err)
	}
	for _, info := range infos {
		if strings.HasPrefix(info.Name, prefix) {
			if err := o.obs.Delete(ctx, info.Name); err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
				return storeError(job, id, "blob "+strings.TrimPrefix(info.Name, prefix), err)
			}
		}
	}
	return nil
}
