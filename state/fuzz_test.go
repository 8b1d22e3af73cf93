package state

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
	"time"
)

// FuzzRestore feeds arbitrary bytes to the snapshot decoder: it returns
// ErrSnapshot (or a mismatch error) and never panics or allocates much more
// than it reads.
func FuzzRestore(f *testing.F) {
	fx := &fixture{t: f, backend: BackendMemory, clock: newClock(0)}
	src := fx.open(value("v", ttl(time.Hour)), list("l", TTL{}), mapping("m", ttl(time.Hour)))
	fill(f, src, keys(5), "")
	snap, _ := snapshotBytes(f, src, Timer{Domain: 1, Timestamp: 3, Key: []byte(keyName(1))})
	f.Add(snap)
	f.Add(snap[:len(snap)-1])
	f.Add([]byte("WSKS"))
	small := fx.openRange(4, Range{0, 3}, nil, value("v", TTL{}))
	setKey(f, small, "x")
	must(f, small.SetValue(0, []byte("y")))
	tiny, _ := snapshotBytes(f, small)
	f.Add(tiny)
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, maxP := range []int{4, 128} {
			k, err := Open(Config{MaxParallelism: maxP, Range: Range{0, maxP/2 - 1},
				States: []Descriptor{value("v", ttl(time.Hour)), list("l", TTL{}), mapping("m", ttl(time.Hour))}, Clock: newClock(0)})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := k.Restore(context.Background(), []io.Reader{bytes.NewReader(data)}); err == nil {
				dump(t, k, keys(5))
			} else if !errors.Is(err, ErrSnapshot) && !bytes.HasPrefix(data, []byte("WSKS")) {
				t.Fatalf("error %v does not wrap ErrSnapshot", err)
			}
			if err := k.Close(); err != nil {
				t.Fatal(err)
			}
		}
	})
}
