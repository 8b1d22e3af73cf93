package checkpoint

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"wasmstream.io/platform/connector"
)

// stores returns every Store implementation, fresh.
func stores(t *testing.T) map[string]Store {
	t.Helper()
	ctx := context.Background()
	srv, err := connector.StartEmbedded(ctx, connector.EmbeddedConfig{DataDir: t.TempDir(), Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	nc, js, err := connector.Connect(ctx, srv.ClientURL(), "checkpoint-test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	obs, err := NewObjectStore(ctx, js, "CHECKPOINTS", 1)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]Store{"dir": NewDirStore(t.TempDir()), "object": obs}
}

// TestStoreConformance runs the same checks against every Store.
func TestStoreConformance(t *testing.T) {
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			if _, err := Latest(ctx, s, "job"); !errors.Is(err, ErrNotFound) {
				t.Fatalf("latest of nothing: %v", err)
			}
			for id := int64(1); id <= 4; id++ {
				kind := KindCheckpoint
				if id == 2 {
					kind = KindSavepoint
				}
				a, err := s.PutBlob(ctx, "job", id, "op-0", []byte("state of op 0"))
				if err != nil {
					t.Fatal(err)
				}
				b, err := s.PutBlobFrom(ctx, "job", id, "src-0", strings.NewReader(""))
				if err != nil {
					t.Fatal(err)
				}
				m := &Metadata{Job: "job", ID: id, Kind: kind, Created: time.Unix(id, 0).UTC(), Blobs: map[string]Blob{"op-0": a, "src-0": b}}
				if err := s.Commit(ctx, m); err != nil {
					t.Fatal(err)
				}
			}
			// A checkpoint whose metadata was never written does not exist.
			if _, err := s.PutBlob(ctx, "job", 5, "op-0", []byte("half")); err != nil {
				t.Fatal(err)
			}
			latest, err := Latest(ctx, s, "job")
			if err != nil || latest.ID != 4 || latest.Size() != int64(len("state of op 0")) {
				t.Fatalf("latest %+v, %v", latest, err)
			}
			data, err := s.GetBlob(ctx, "job", 4, latest.Blobs["op-0"])
			if err != nil || string(data) != "state of op 0" {
				t.Fatalf("blob %q, %v", data, err)
			}
			streamed, err := s.PutBlobFrom(ctx, "job", 4, "streamed", strings.NewReader("from a reader"))
			if err != nil {
				t.Fatal(err)
			}
			if data, err := s.GetBlob(ctx, "job", 4, streamed); err != nil || string(data) != "from a reader" || streamed.Size != 13 {
				t.Fatalf("streamed blob %q %+v, %v", data, streamed, err)
			}
			forged := latest.Blobs["op-0"]
			forged.SHA256 = forged.SHA256[1:] + "0"
			if _, err := s.GetBlob(ctx, "job", 4, forged); !errors.Is(err, ErrCorrupt) ||
				err.Error() != "checkpoint store: job job checkpoint 4 blob op-0: corrupt: SHA-256 "+latest.Blobs["op-0"].SHA256+", the metadata recorded "+forged.SHA256 {
				t.Fatalf("checksum mismatch: %v", err)
			}
			short := latest.Blobs["op-0"]
			short.Size++
			if _, err := s.GetBlob(ctx, "job", 4, short); !errors.Is(err, ErrCorrupt) ||
				err.Error() != "checkpoint store: job job checkpoint 4 blob op-0: corrupt: 13 bytes, the metadata recorded 14" {
				t.Fatalf("size mismatch: %v", err)
			}
			gone := Blob{Name: "nothing", Size: 1, SHA256: forged.SHA256}
			var corrupt *CorruptError
			if _, err := s.GetBlob(ctx, "job", 4, gone); !errors.As(err, &corrupt) || corrupt.ID != 4 ||
				err.Error() != "checkpoint store: job job checkpoint 4 blob nothing: corrupt: missing" {
				t.Fatalf("missing blob: %v", err)
			}
			if err := Prune(ctx, s, "job", 2); err != nil {
				t.Fatal(err)
			}
			all, err := s.List(ctx, "job")
			if err != nil {
				t.Fatal(err)
			}
			var ids []int64
			for _, m := range all {
				ids = append(ids, m.ID)
			}
			// Checkpoint 1 is pruned; savepoint 2 is kept whatever retain says.
			if len(ids) != 3 || ids[0] != 2 || ids[1] != 3 || ids[2] != 4 {
				t.Fatalf("after prune: %v", ids)
			}
			if _, err := s.GetBlob(ctx, "job", 1, latest.Blobs["op-0"]); err == nil {
				t.Fatal("pruned blob still readable")
			}
			_, err = s.PutBlob(ctx, "job", 6, "../escape", nil)
			if want := "checkpoint store: job job checkpoint 6 blob ../escape: invalid blob name: " +
				`want a name that is not empty, holds no / or \, does not start with "." and is not _metadata`; err == nil || err.Error() != want {
				t.Fatalf("blob name with a path: %v, want %s", err, want)
			}
			if others, err := s.List(ctx, "other"); err != nil || len(others) != 0 {
				t.Fatalf("other job: %v %v", others, err)
			}
		})
	}
}

func TestDirStoreIgnoresHalfWrittenMetadata(t *testing.T) {
	root := t.TempDir()
	s := NewDirStore(root)
	ctx := context.Background()
	if _, err := s.PutBlob(ctx, "job", 7, "op-0", []byte("x")); err != nil {
		t.Fatal(err)
	}
	// A crash during Commit leaves the temporary file, never _metadata.
	if err := os.WriteFile(filepath.Join(root, "job", "7", metadataFile+".tmp"), []byte(`{"job":"jo`), 0o644); err != nil {
		t.Fatal(err)
	}
	if all, err := s.List(ctx, "job"); err != nil || len(all) != 0 {
		t.Fatalf("list: %v %v", all, err)
	}
}
