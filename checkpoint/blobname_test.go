package checkpoint

import (
	"context"
	"io"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func TestSubtaskBlobs(t *testing.T) {
	m := &Metadata{Blobs: map[string]Blob{
		BlobName("window", "agg", 2):  {Name: "w2"},
		BlobName("window", "agg", 0):  {Name: "w0"},
		BlobName("window", "agg2", 1): {Name: "other vertex"},
		BlobName("keyed", "agg", 1):   {Name: "other kind"},
		"window~agg~x":                {Name: "not a subtask"},
		"window~agg":                  {Name: "no subtask"},
	}}
	tests := []struct {
		kind, vertex string
		want         map[int]string
		order        []int
	}{
		{"window", "agg", map[int]string{0: "w0", 2: "w2"}, []int{0, 2}},
		{"window", "agg2", map[int]string{1: "other vertex"}, []int{1}},
		{"keyed", "agg", map[int]string{1: "other kind"}, []int{1}},
		{"window", "missing", map[int]string{}, []int{}},
	}
	for _, tt := range tests {
		t.Run(tt.kind+"/"+tt.vertex, func(t *testing.T) {
			blobs := m.SubtaskBlobs(tt.kind, tt.vertex)
			got := map[int]string{}
			for i, b := range blobs {
				got[i] = b.Name
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("SubtaskBlobs = %v, want %v", got, tt.want)
			}
			if order := SubtaskOrder(blobs); !reflect.DeepEqual(order, tt.order) {
				t.Fatalf("SubtaskOrder = %v, want %v", order, tt.order)
			}
		})
	}
}

// ReadSubtasks gives the blobs' bytes in subtask order, and a blob whose
// bytes no longer match its checksum is an error.
func TestReadSubtasks(t *testing.T) {
	ctx := context.Background()
	s := NewDirStore(t.TempDir())
	m := &Metadata{Job: "job", ID: 1}
	blobs := map[int]Blob{}
	for _, i := range []int{2, 0, 1} {
		b, err := s.PutBlob(ctx, "job", 1, BlobName("window", "w", i), []byte("subtask "+strconv.Itoa(i)))
		if err != nil {
			t.Fatal(err)
		}
		blobs[i] = b
	}
	readers, err := ReadSubtasks(ctx, s, m, blobs)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range readers {
		data, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(data))
	}
	if want := []string{"subtask 0", "subtask 1", "subtask 2"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("read %q, want %q", got, want)
	}
	bad := blobs[1]
	bad.SHA256 = strings.Repeat("0", 64)
	blobs[1] = bad
	if _, err := ReadSubtasks(ctx, s, m, blobs); err == nil {
		t.Fatal("a blob with another checksum was read")
	}
}
