package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/internal/wasmbuild"
	"wasmstream.io/platform/runtime"
)

// bucketLines is every line of the data objects of an object store bucket
// (not the indexes), sorted, and the number of objects.
func bucketLines(t *testing.T, js jetstream.JetStream, bucket string) ([]string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	obs, err := js.ObjectStore(ctx, bucket)
	if err != nil {
		t.Fatal(err)
	}
	list, err := obs.List(ctx)
	if err != nil && !errors.Is(err, jetstream.ErrNoObjectsFound) {
		t.Fatal(err)
	}
	var lines []string
	objects := 0
	for _, o := range list {
		if strings.HasPrefix(o.Name, "out/_index/") {
			continue
		}
		objects++
		data, err := obs.GetString(ctx, o.Name)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, strings.Split(strings.TrimSuffix(data, "\n"), "\n")...)
	}
	slices.Sort(lines)
	return lines, objects
}

// TestKillNineObjectStoreSink runs a keyed exactly-once job (seqcheck's
// track) into an object store sink over 200,000 records in a separate
// platform process, once uninterrupted and once while SIGKILLing the
// process at five random points of its progress and restarting it on the
// same data directory. The objects of both runs hold exactly the same
// records (key, value and timestamp), each once.
func TestKillNineObjectStoreSink(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills platform processes")
	}
	c, js, closeNATS := startChild(t)
	ctx := context.Background()
	const keys, perKey = 1000, 200
	payloads, subject := seqRecords(keys, perKey, 4, "in")
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "IN", Subjects: []string{"in.>"}, Storage: jetstream.FileStorage}); err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{"FILES_A", "FILES_B"} {
		if _, err := js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: b, Storage: jetstream.FileStorage}); err != nil {
			t.Fatal(err)
		}
	}
	publishAll(t, js, payloads, subject)
	mod := c.upload(wasmbuild.UDF(t, "seqcheck"))
	submit := func(bucket string) string {
		return c.submit(fmt.Sprintf(`
name: files
parallelism: 2
checkpoint: {interval: 200ms, mode: exactly_once}
restart: {strategy: fixed_delay, delay: 100ms}
sources: [{id: in, jetstream: {stream: IN, subjects: ["in.0", "in.1", "in.2", "in.3"], bounded: true}}]
operators: [{id: track, input: in, key_by: {field: k}, process: {module: %s, function: track}}]
sinks: [{id: files, input: track, object_store: {bucket: %s, prefix: out, roll_bytes: 20000}}]
`, mod.ID, bucket))
	}
	uninterrupted := submit("FILES_A")
	for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		info := c.job(uninterrupted)
		if info.State == runtime.StateFinished {
			break
		}
		if info.State.Terminal() || time.Now().After(deadline) {
			t.Fatalf("uninterrupted run: %s %s", info.State, info.Failure)
		}
	}
	expected, objects := bucketLines(t, js, "FILES_A")
	if len(expected) != keys*perKey {
		t.Fatalf("uninterrupted run: %d records in %d objects, want %d", len(expected), objects, keys*perKey)
	}
	// The bucket's stream counts the objects' chunks and descriptions: the
	// progress of the killed run, which writes about as many.
	total := outputs(t, js, "OBJ_FILES_A")
	js, closeNATS = c.killAtRandom(submit("FILES_B"), "OBJ_FILES_B", total, 5, js, closeNATS)
	defer closeNATS()
	got, killedObjects := bucketLines(t, js, "FILES_B")
	if !slices.Equal(got, expected) {
		lost, dup := 0, 0
		seen := map[string]int{}
		for _, l := range got {
			seen[l]++
		}
		for _, l := range expected {
			switch n := seen[l]; {
			case n == 0:
				lost++
			case n > 1:
				dup += n - 1
			}
		}
		t.Fatalf("killed run: %d records in %d objects, uninterrupted %d in %d: %d lost, %d duplicated",
			len(got), killedObjects, len(expected), objects, lost, dup)
	}
	t.Logf("%d records in %d objects uninterrupted, %d objects killed", len(expected), objects, killedObjects)
}
