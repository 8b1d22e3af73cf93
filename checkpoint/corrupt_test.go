package checkpoint

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// commitN commits checkpoints 1 to n of job "job" in s, each with one blob.
func commitN(t *testing.T, s Store, n int64) {
	t.Helper()
	ctx := context.Background()
	for id := int64(1); id <= n; id++ {
		b, err := s.PutBlob(ctx, "job", id, "op-0", []byte("state"))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Commit(ctx, &Metadata{Job: "job", ID: id, Kind: KindCheckpoint, Created: time.Unix(id, 0).UTC(), Blobs: map[string]Blob{"op-0": b}}); err != nil {
			t.Fatal(err)
		}
	}
}

func ids(all []*Metadata) []int64 {
	out := []int64{}
	for _, m := range all {
		out = append(out, m.ID)
	}
	return out
}

// TestDirStoreListReportsCorruptMetadata: a truncated _metadata leaves its
// checkpoint out of the list, reported as a *CorruptError in a *ListError,
// and Latest is the newest of the others.
func TestDirStoreListReportsCorruptMetadata(t *testing.T) {
	root := t.TempDir()
	s := NewDirStore(root)
	ctx := context.Background()
	commitN(t, s, 3)
	path := filepath.Join(root, "job", "3", metadataFile)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	all, err := s.List(ctx, "job")
	var listed *ListError
	if !errors.As(err, &listed) || !errors.Is(err, ErrCorrupt) || len(listed.Corrupt) != 1 {
		t.Fatalf("list error: %v", err)
	}
	c := listed.Corrupt[0]
	want := "checkpoint store: job job checkpoint 3 metadata: corrupt: " + itoa(len(data)/2) + " bytes that do not decode: unexpected end of JSON input"
	if c.Job != "job" || c.ID != 3 || c.What != "metadata" || err.Error() != want {
		t.Fatalf("corrupt %+v: %q, want %q", c, err, want)
	}
	if got := ids(all); len(got) != 2 || got[0] != 1 || got[1] != 2 {
		t.Fatalf("listed %v, want [1 2]", got)
	}
	latest, err := Latest(ctx, s, "job")
	if err != nil || latest.ID != 2 {
		t.Fatalf("latest %+v, %v", latest, err)
	}
	// Pruning keeps the newest good ones and a corrupt one newer than them.
	if err := Prune(ctx, s, "job", 1); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "job", "3")); err != nil {
		t.Fatalf("corrupt checkpoint newer than those kept: %v", err)
	}
	if all, _ := s.List(ctx, "job"); len(all) != 1 || all[0].ID != 2 {
		t.Fatalf("after prune: %v", ids(all))
	}
}

// TestPruneDeletesOldCorruptCheckpoints: a corrupt checkpoint older than
// the retained ones goes when they are pruned.
func TestPruneDeletesOldCorruptCheckpoints(t *testing.T) {
	root := t.TempDir()
	s := NewDirStore(root)
	ctx := context.Background()
	commitN(t, s, 3)
	if err := os.WriteFile(filepath.Join(root, "job", "1", metadataFile), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Prune(ctx, s, "job", 2); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "job", "1")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("old corrupt checkpoint kept: %v", err)
	}
	all, err := s.List(ctx, "job")
	if err != nil || len(all) != 2 {
		t.Fatalf("list %v, %v", ids(all), err)
	}
}

// TestObjectStoreListReportsCorruptMetadata: the same for the object store.
func TestObjectStoreListReportsCorruptMetadata(t *testing.T) {
	s := stores(t)["object"].(*ObjectStore)
	ctx := context.Background()
	commitN(t, s, 2)
	if _, err := s.obs.PutBytes(ctx, objectName("job", 2, metadataFile), []byte(`{"job":"job","id":2,"kind":"checkpoint","blobs":{"op-0":{"name":"op-0","size":5,"sha256":"00"}}}`)); err != nil {
		t.Fatal(err)
	}
	all, err := s.List(ctx, "job")
	want := `checkpoint store: job job checkpoint 2 metadata: corrupt: blob "op-0": SHA-256 "00" is not 64 hex digits`
	if err == nil || err.Error() != want || !errors.Is(err, ErrCorrupt) {
		t.Fatalf("list error %v, want %s", err, want)
	}
	if got := ids(all); len(got) != 1 || got[0] != 1 {
		t.Fatalf("listed %v, want [1]", got)
	}
}

func TestDecodeMetadataRejects(t *testing.T) {
	sum := strings.Repeat("ab", 32)
	for _, c := range []struct{ data, want string }{
		{``, `0 bytes that do not decode: unexpected end of JSON input`},
		{`{"job":"job","id":1,"kind":"checkpoint","blobs":{}`, `50 bytes that do not decode: unexpected end of JSON input`},
		{`{"job":"other","id":1,"kind":"checkpoint"}`, `names job "other"`},
		{`{"job":"job","id":2,"kind":"checkpoint"}`, `names checkpoint 2`},
		{`{"job":"job","id":1}`, `kind "": want checkpoint or savepoint`},
		{`{"job":"job","id":1,"kind":"savepoint","blobs":{"a":{"name":"b","size":1,"sha256":"` + sum + `"}}}`, `blob "b" is listed as "a"`},
		{`{"job":"job","id":1,"kind":"savepoint","blobs":{"../a":{"name":"../a","size":1,"sha256":"` + sum + `"}}}`, `blob "../a": invalid blob name: want a name that is not empty, holds no / or \, does not start with "." and is not _metadata`},
		{`{"job":"job","id":1,"kind":"savepoint","blobs":{"a":{"name":"a","size":-1,"sha256":"` + sum + `"}}}`, `blob "a": size -1`},
		{`{"job":"job","id":1,"kind":"checkpoint","blobs":[]}`, `51 bytes that do not decode: json: cannot unmarshal array into Go struct field Metadata.blobs of type map[string]checkpoint.Blob`},
	} {
		_, err := DecodeMetadata("job", 1, []byte(c.data))
		want := "checkpoint store: job job checkpoint 1 metadata: corrupt: " + c.want
		if err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %s", c.data, err, want)
		}
	}
}

// FuzzDecodeMetadata: DecodeMetadata never panics, fails only with a
// *CorruptError, and what it accepts encodes and decodes to the same.
func FuzzDecodeMetadata(f *testing.F) {
	good, err := json.Marshal(&Metadata{Job: "job", ID: 1, Kind: KindCheckpoint, Created: time.Unix(1, 0).UTC(),
		Blobs: map[string]Blob{"positions~src~0": blobRef("positions~src~0", []byte(`{">":3}`))}, Finished: []string{"sink"}})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte(`{"job":"job","id":1,"kind":"savepoint"}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := DecodeMetadata("job", 1, data)
		if err != nil {
			var corrupt *CorruptError
			if !errors.As(err, &corrupt) || corrupt.ID != 1 || corrupt.What != "metadata" {
				t.Fatalf("error is not a corrupt metadata: %v", err)
			}
			return
		}
		again, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		m2, err := DecodeMetadata("job", 1, again)
		if err != nil {
			t.Fatalf("re-encoded metadata: %v", err)
		}
		if m2.Size() != m.Size() || len(m2.Blobs) != len(m.Blobs) || m2.Kind != m.Kind {
			t.Fatalf("re-encoded metadata differs: %+v, %+v", m, m2)
		}
	})
}

func itoa(n int) string { return strconv.Itoa(n) }
