package connector

import (
	"fmt"
	"io"
	"testing"
	"time"

	"wasmstream.io/platform/abi"
)

// TestJetStreamSourceLastSplits checks that each record is attributed to the
// subject filter it came from.
func TestJetStreamSourceLastSplits(t *testing.T) {
	ts := startServer(t)
	ctx := testCtx(t)
	if err := EnsureStream(ctx, ts.js, "EV", "ev.>"); err != nil {
		t.Fatal(err)
	}
	subjects := []string{"ev.a", "ev.b", "ev.c"}
	publish(t, ts, "EV", subjects, 0, 90)
	src := newSource(t, ts, JetStreamSourceConfig{Stream: "EV", Subjects: []string{"ev.a", "ev.c"}, Bounded: true, Parallelism: 1})
	if src.Splits() != 2 {
		t.Fatalf("Splits = %d, want 2", src.Splits())
	}
	// Message i went to subjects[i%3]: ev.a is filter 0, ev.c filter 1.
	want := map[int]int32{0: 0, 2: 1}
	seen := 0
	var b abi.Batch
	for {
		b.Reset()
		err := src.Fetch(ctx, &b, 7, 5*time.Second)
		splits := src.LastSplits()
		if len(splits) != b.Len() {
			t.Fatalf("LastSplits has %d entries for %d records", len(splits), b.Len())
		}
		for i := range b.Records {
			var n int
			if _, serr := fmt.Sscanf(string(b.Records[i].Value), "m-%d", &n); serr != nil {
				t.Fatal(serr)
			}
			if splits[i] != want[n%3] {
				t.Fatalf("record %q: split %d, want %d", b.Records[i].Value, splits[i], want[n%3])
			}
			seen++
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if seen != 60 {
		t.Fatalf("read %d records, want 60", seen)
	}
}
