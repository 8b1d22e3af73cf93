package checkpoint

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

const metadataFile = "_metadata"

// DirStore keeps checkpoints in a local directory:
// <root>/<job>/<id>/<blob> with <root>/<job>/<id>/_metadata written last by
// rename, after the blobs and the metadata are synced.
type DirStore struct {
	root string
}

// NewDirStore keeps checkpoints under root.
func NewDirStore(root string) *DirStore { return &DirStore{root: root} }

func (d *DirStore) dir(job string, id int64) string {
	return filepath.Join(d.root, job, strconv.FormatInt(id, 10))
}

// PutBlob implements Store.
func (d *DirStore) PutBlob(_ context.Context, job string, id int64, name string, data []byte) (Blob, error) {
	if err := checkName(name); err != nil {
		return Blob{}, storeError(job, id, "blob "+name, err)
	}
	dir := d.dir(job, id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Blob{}, storeError(job, id, "blob "+name, err)
	}
	if err := writeSynced(filepath.Join(dir, name), data); err != nil {
		return Blob{}, storeError(job, id, "blob "+name, err)
	}
	return blobRef(name, data), nil
}

// PutBlobFrom implements Store.
func (d *DirStore) PutBlobFrom(_ context.Context, job string, id int64, name string, r io.Reader) (Blob, error) {
	if err := checkName(name); err != nil {
		return Blob{}, storeError(job, id, "blob "+name, err)
	}
	dir := d.dir(job, id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Blob{}, storeError(job, id, "blob "+name, err)
	}
	hr := newHashingReader(r)
	if err := writeSyncedFrom(filepath.Join(dir, name), hr); err != nil {
		return Blob{}, storeError(job, id, "blob "+name, err)
	}
	return hr.blob(name), nil
}

// GetBlob implements Store.
func (d *DirStore) GetBlob(_ context.Context, job string, id int64, ref Blob) ([]byte, error) {
	data, err := os.ReadFile(filepath.Join(d.dir(job, id), ref.Name))
	if errors.Is(err, os.ErrNotExist) {
		return nil, corruptBlob(job, id, ref.Name, "missing")
	}
	if err != nil {
		return nil, storeError(job, id, "blob "+ref.Name, err)
	}
	return verify(job, id, ref, data)
}

// Commit implements Store: the metadata goes to a temporary file that is
// synced and then renamed into place, so a crash leaves either no metadata
// or all of it.
func (d *DirStore) Commit(_ context.Context, m *Metadata) error {
	data, err := json.Marshal(m)
	if err != nil {
		return storeError(m.Job, m.ID, "metadata", err)
	}
	dir := d.dir(m.Job, m.ID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return storeError(m.Job, m.ID, "metadata", err)
	}
	tmp := filepath.Join(dir, metadataFile+".tmp")
	if err := writeSynced(tmp, data); err != nil {
		return storeError(m.Job, m.ID, "metadata", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, metadataFile)); err != nil {
		return storeError(m.Job, m.ID, "metadata", err)
	}
	if err := syncDir(dir); err != nil {
		return storeError(m.Job, m.ID, "metadata", err)
	}
	return nil
}

// List implements Store. Directories without metadata (a checkpoint that
// never completed) are skipped; metadata that does not decode is reported
// in a *ListError.
func (d *DirStore) List(_ context.Context, job string) ([]*Metadata, error) {
	entries, err := os.ReadDir(filepath.Join(d.root, job))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, storeError(job, 0, "", err)
	}
	var (
		out     []*Metadata
		corrupt []*CorruptError
	)
	for _, e := range entries {
		id, err := strconv.ParseInt(e.Name(), 10, 64)
		if err != nil || !e.IsDir() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(d.dir(job, id), metadataFile))
		if errors.Is(err, os.ErrNotExist) {
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
func (d *DirStore) Delete(_ context.Context, job string, id int64) error {
	dir := d.dir(job, id)
	if err := os.Remove(filepath.Join(dir, metadataFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return storeError(job, id, "metadata", err)
	}
	if err := os.RemoveAll(dir); err != nil {
		return storeError(job, id, "", err)
	}
	return nil
}

func checkName(name string) error {
	if name == "" || name == metadataFile || strings.ContainsAny(name, `/\`) || strings.HasPrefix(name, ".") {
		return errors.New(`invalid blob name: want a name that is not empty, holds no / or \, does not start with "." and is not ` + metadataFile)
	}
	return nil
}

func writeSynced(path string, data []byte) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func writeSyncedFrom(path string, r io.Reader) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
