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
)

// ObjectStore keeps checkpoints in a JetStream object store bucket, so that
// several platform processes can share them: objects <job>/<id>/<blob> and
// <job>/<id>/_metadata, written last. An object store put is atomic (the
// object's info is published after its chunks), so metadata is either whole
// or absent.
type ObjectStore struct {
	obs jetstream.ObjectStore
}

// NewObjectStore opens or creates the bucket.
func NewObjectStore(ctx context.Context, js jetstream.JetStream, bucket string) (*ObjectStore, error) {
	obs, err := js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{
		Bucket: bucket, Description: "platform checkpoints and savepoints", Storage: jetstream.FileStorage,
	})
	if err != nil {
		return nil, fmt.Errorf("checkpoint bucket %s: %w", bucket, err)
	}
	return &ObjectStore{obs: obs}, nil
}

func objectName(job string, id int64, name string) string {
	return job + "/" + strconv.FormatInt(id, 10) + "/" + name
}

// PutBlob implements Store.
func (o *ObjectStore) PutBlob(ctx context.Context, job string, id int64, name string, data []byte) (Blob, error) {
	if err := checkName(name); err != nil {
		return Blob{}, err
	}
	if _, err := o.obs.PutBytes(ctx, objectName(job, id, name), data); err != nil {
		return Blob{}, fmt.Errorf("checkpoint store: %w", err)
	}
	return blobRef(name, data), nil
}

// PutBlobFrom implements Store.
func (o *ObjectStore) PutBlobFrom(ctx context.Context, job string, id int64, name string, r io.Reader) (Blob, error) {
	if err := checkName(name); err != nil {
		return Blob{}, err
	}
	hr := newHashingReader(r)
	if _, err := o.obs.Put(ctx, jetstream.ObjectMeta{Name: objectName(job, id, name)}, hr); err != nil {
		return Blob{}, fmt.Errorf("checkpoint store: job %s checkpoint %d blob %s: %w", job, id, name, err)
	}
	return hr.blob(name), nil
}

// GetBlob implements Store.
func (o *ObjectStore) GetBlob(ctx context.Context, job string, id int64, ref Blob) ([]byte, error) {
	data, err := o.obs.GetBytes(ctx, objectName(job, id, ref.Name))
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return nil, fmt.Errorf("job %s checkpoint %d blob %s: %w", job, id, ref.Name, ErrCorrupt)
	}
	if err != nil {
		return nil, fmt.Errorf("checkpoint store: %w", err)
	}
	return verify(job, id, ref, data)
}

// Commit implements Store.
func (o *ObjectStore) Commit(ctx context.Context, m *Metadata) error {
	data, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if _, err := o.obs.PutBytes(ctx, objectName(m.Job, m.ID, metadataFile), data); err != nil {
		return fmt.Errorf("checkpoint store: %w", err)
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
		return nil, fmt.Errorf("checkpoint store: %w", err)
	}
	var out []*Metadata
	prefix := job + "/"
	for _, info := range infos {
		rest, ok := strings.CutPrefix(info.Name, prefix)
		if !ok || !strings.HasSuffix(rest, "/"+metadataFile) {
			continue
		}
		data, err := o.obs.GetBytes(ctx, info.Name)
		if err != nil {
			return nil, fmt.Errorf("checkpoint store: %w", err)
		}
		var m Metadata
		if err := json.Unmarshal(data, &m); err != nil {
			return nil, fmt.Errorf("checkpoint store: %s: %w", info.Name, err)
		}
		out = append(out, &m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// Delete implements Store.
func (o *ObjectStore) Delete(ctx context.Context, job string, id int64) error {
	prefix := job + "/" + strconv.FormatInt(id, 10) + "/"
	if err := o.obs.Delete(ctx, prefix+metadataFile); err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
		return fmt.Errorf("checkpoint store: %w", err)
	}
	infos, err := o.obs.List(ctx)
	if errors.Is(err, jetstream.ErrNoObjectsFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("checkpoint store: %w", err)
	}
	for _, info := range infos {
		if strings.HasPrefix(info.Name, prefix) {
			if err := o.obs.Delete(ctx, info.Name); err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
				return fmt.Errorf("checkpoint store: %w", err)
			}
		}
	}
	return nil
}
