package connector

import (
	"bytes"
	"io"
	"testing"
	"time"

	"wasmstream.io/platform/abi"
)

// encodeEpochsForTest is the snapshot of epochs of the given record
// values, one epoch per list.
func encodeEpochsForTest(t testing.TB, values ...[]string) []byte {
	t.Helper()
	var epochs []*Epoch
	for i, vs := range values {
		e := newEpoch("job.sink.0")
		e.ID = int64(i + 1)
		e.Since = time.Unix(0, int64(i+1)*1e9)
		for j, v := range vs {
			e.stage(&abi.Record{Key: []byte("k"), Value: []byte(v), Timestamp: int64(j), Headers: []abi.Header{{Name: []byte("h"), Value: []byte(v)}}})
		}
		e.endBlock()
		epochs = append(epochs, e)
	}
	r, release, err := EncodeEpochs(epochs)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	data, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// FuzzDecodeEpochs: a sink's state, as a checkpoint holds it (staged
// epochs and the records a replay is still to produce again), never makes
// DecodeSinkState panic or allocate what the data does not hold, and what it
// decodes encodes to the same bytes.
func FuzzDecodeEpochs(f *testing.F) {
	seed := encodeEpochsForTest(f, []string{"a", "bb"}, nil, []string{"ccc"})
	f.Add(seed)
	f.Add(seed[:len(seed)/2])
	f.Add(encodeEpochsForTest(f))
	f.Add([]byte(epochMagic))
	f.Add(append([]byte(epochMagic), epochVersion, 1, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff))
	f.Add(append([]byte(epochMagic), epochVersionNoReplay, 0, 0, 0, 0))
	r := newReplay(10)
	for _, v := range []string{"a", "a", "b"} {
		r.count[r.base([]byte("k"), []byte(v), 1)]++
		r.left++
	}
	withReplay := append(encodeEpochsForTest(f, []string{"x"})[:len(encodeEpochsForTest(f, []string{"x"}))-4], r.encode()...)
	f.Add(withReplay)
	f.Add(withReplay[:len(withReplay)-3])
	f.Fuzz(func(t *testing.T, data []byte) {
		epochs, replay, err := DecodeSinkState(data)
		if err != nil {
			return
		}
		again := encodeStateAgain(t, epochs, replay)
		decoded, replayAgain, err := DecodeSinkState(again)
		if err != nil {
			t.Fatalf("re-encoded sink state: %v", err)
		}
		if len(decoded) != len(epochs) {
			t.Fatalf("re-encoded %d epochs, want %d", len(decoded), len(epochs))
		}
		for i := range epochs {
			if decoded[i].ID != epochs[i].ID || decoded[i].Count != epochs[i].Count || !decoded[i].Since.Equal(epochs[i].Since) {
				t.Fatalf("epoch %d differs: %+v, %+v", i, decoded[i], epochs[i])
			}
		}
		if (replay == nil) != (replayAgain == nil) || replay != nil && replay.Len() != replayAgain.Len() {
			t.Fatalf("re-encoded replay %v, want %v", replayAgain, replay)
		}
		if third := encodeStateAgain(t, decoded, replayAgain); !bytes.Equal(third, again) {
			t.Fatalf("encoding is not stable")
		}
	})
}

func encodeStateAgain(t *testing.T, epochs []*Epoch, replay *Replay) []byte {
	var left []byte
	if replay != nil {
		left = replay.encode()
	}
	r, release, err := encodeSinkState(epochs, left)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	data, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
