package checkpoint

import (
	"bytes"
	"context"
	"io"
	"sort"
	"strconv"
	"strings"
)

// BlobName is the name under which subtask of vertex keeps its blob of
// kind: kind~vertex~subtask. The runtime restores a vertex's state and a
// replay reads it by these names, so both use this one scheme.
func BlobName(kind, vertex string, subtask int) string {
	return kind + "~" + vertex + "~" + strconv.Itoa(subtask)
}

// SubtaskBlobs are the blobs of kind for vertex, by the subtask that
// wrote them (names made by BlobName).
func (m *Metadata) SubtaskBlobs(kind, vertex string) map[int]Blob {
	out := map[int]Blob{}
	prefix := kind + "~" + vertex + "~"
	for name, b := range m.Blobs {
		rest, ok := strings.CutPrefix(name, prefix)
		if !ok {
			continue
		}
		if i, err := strconv.Atoi(rest); err == nil {
			out[i] = b
		}
	}
	return out
}

// SubtaskOrder is the subtasks of blobs in ascending order, the order in
// which their state is read back.
func SubtaskOrder(blobs map[int]Blob) []int {
	subtasks := make([]int, 0, len(blobs))
	for i := range blobs {
		subtasks = append(subtasks, i)
	}
	sort.Ints(subtasks)
	return subtasks
}

// ReadSubtasks reads blobs, blobs of checkpoint m in store by subtask, in
// subtask order, each checked against its size and checksum.
func ReadSubtasks(ctx context.Context, store Store, m *Metadata, blobs map[int]Blob) ([]io.Reader, error) {
	out := make([]io.Reader, 0, len(blobs))
	for _, i := range SubtaskOrder(blobs) {
		data, err := store.GetBlob(ctx, m.Job, m.ID, blobs[i])
		if err != nil {
			return nil, err
		}
		out = append(out, bytes.NewReader(data))
	}
	return out, nil
}
