package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
)

// objectLines reads every data object of a bucket (not the indexes) and
// returns their lines, and the names of the objects and of the indexes.
func objectLines(t *testing.T, js jetstream.JetStream, bucket string) (lines, objects, indexes []string) {
	t.Helper()
	ctx := context.Background()
	obs, err := js.ObjectStore(ctx, bucket)
	if err != nil {
		t.Fatal(err)
	}
	list, err := obs.List(ctx)
	if errors.Is(err, jetstream.ErrNoObjectsFound) {
		return nil, nil, nil
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range list {
		if strings.Contains(o.Name, "/_index/") {
			indexes = append(indexes, o.Name)
			continue
		}
		objects = append(objects, o.Name)
		data, err := obs.GetString(ctx, o.Name)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, strings.Split(strings.TrimSuffix(data, "\n"), "\n")...)
	}
	slices.Sort(lines)
	slices.Sort(objects)
	slices.Sort(indexes)
	return lines, objects, indexes
}

// An exactly-once job writes its output as objects, one per subtask and
// checkpoint, each record once; the indexes name every subtask's last
// commit.
func TestObjectStoreSinkJob(t *testing.T) {
	m, js := newJetStreamManager(t)
	ctx := context.Background()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "IN", Subjects: []string{"in"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: "FILES"}); err != nil {
		t.Fatal(err)
	}
	var want []string
	for i := range 1000 {
		v := fmt.Sprintf(`{"n":%d}`, i)
		_, err := js.Publish(ctx, "in", []byte(v))
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, v)
	}
	runJob(t, m, `
name: files
parallelism: 2
checkpoint: {interval: 50ms}
sources: [{id: in, parallelism: 1, jetstream: {stream: IN, bounded: true}}]
sinks: [{id: out, input: in, object_store: {bucket: FILES, prefix: raw/in}}]
`)
	lines, objects, indexes := objectLines(t, js, "FILES")
	var values []string
	for _, l := range lines {
		var rec struct {
			Key       string          `json:"key"`
			Value     json.RawMessage `json:"value"`
			Timestamp int64           `json:"timestamp"`
		}
		if err := json.Unmarshal([]byte(l), &rec); err != nil || rec.Timestamp <= 0 {
			t.Fatalf("line %q: %v", l, err)
		}
		values = append(values, string(rec.Value))
	}
	slices.Sort(values)
	slices.Sort(want)
	if !slices.Equal(values, want) {
		t.Fatalf("%d records in %d objects, want the 1000 once each", len(values), len(objects))
	}
	name := regexp.MustCompile(`^raw/in/[0-9]{8}T[0-9]{6}-[0-9]{10}-[01](_[0-9]{3})?\.jsonl$`)
	for _, o := range objects {
		if !name.MatchString(o) {
			t.Errorf("object name %q", o)
		}
	}
	if want := []string{"raw/in/_index/0.json", "raw/in/_index/1.json"}; !slices.Equal(indexes, want) {
		t.Fatalf("indexes %v, want %v", indexes, want)
	}
}

// A job naming an object store bucket that does not exist is refused.
func TestObjectStoreMissingBucketRefused(t *testing.T) {
	m, _ := newJetStreamManager(t)
	_, err := m.SubmitJob(context.Background(), []byte(`
name: nobucket
checkpoint: {interval: 1s}
sources: [{id: in, generator: {kind: sequence}}]
sinks: [{id: out, input: in, object_store: {bucket: NOPE}}]
`))
	var je *JobError
	if !errors.As(err, &je) || len(je.Problems) != 1 || je.Problems[0].Path != "sinks[0].object_store.bucket" ||
		!strings.Contains(je.Problems[0].Message, `no object store bucket "NOPE"`) {
		t.Fatalf("got %v, want a problem at sinks[0].object_store.bucket", err)
	}
}
