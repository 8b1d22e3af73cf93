package checkpoint

import (
	"reflect"
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
