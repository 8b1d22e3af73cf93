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

// FuzzDecodeEpochs: a sink's staged epochs, as a checkpoint holds them,
// never make DecodeEpochs panic or allocate what the data does not hold,
// and what it decodes encodes to the same bytes.
func FuzzDecodeEpochs(f *testing.F) {
	seed := encodeEpochsForTest(f, []string{"a", "bb"}, nil, []string{"ccc"})
	f.Add(seed)
	f.Add(seed[:len(seed)/2])
	f.Add(encodeEpochsForTest(f))
	f.Add([]byte(epochMagic))
	f.Add(append([]byte(epochMagic), epochVersion, 1, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff))
	f.Fuzz(func(t *testing.T, data []byte) {
		epochs, err := DecodeEpochs(data)
		if err != nil {
			return
		}
		r, release, err := EncodeEpochs(epochs)
		if err != nil {
			t.Fatal(err)
		}
		again, err := io.ReadAll(r)
		release()
		if err != nil {
			t.Fatal(err)
		}
		decoded, err := DecodeEpochs(again)
		if err != nil {
			t.Fatalf("re-encoded epochs: %v", err)
		}
		if len(decoded) != len(epochs) {
			t.Fatalf("re-encoded %d epochs, want %d", len(decoded), len(epochs))
		}
		for i := range epochs {
			if decoded[i].ID != epochs[i].ID || decoded[i].Count != epochs[i].Count || !decoded[i].Since.Equal(epochs[i].Since) {
				t.Fatalf("epoch %d differs: %+v, %+v", i, decoded[i], epochs[i])
			}
		}
		if third := encodeAgain(t, decoded); !bytes.Equal(third, again) {
			t.Fatalf("encoding is not stable")
		}
	})
}

func encodeAgain(t *testing.T, epochs []*Epoch) []byte {
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
