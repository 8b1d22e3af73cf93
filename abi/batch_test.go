package abi

import (
	"bytes"
	"fmt"
	"testing"
)

// AppendValue keeps every value it was given, in place or copied, across
// chunks and resets, as AppendParts keeps the same values.
func TestBatchAppendValue(t *testing.T) {
	value := func(i int) []byte {
		switch i % 5 {
		case 0:
			return nil
		case 1:
			return []byte{}
		case 2:
			return bytes.Repeat([]byte{byte(i)}, minFree+i) // outgrows its space
		default:
			return []byte(fmt.Sprintf("value %d %s", i, bytes.Repeat([]byte("x"), i%700)))
		}
	}
	var got, want Batch
	for round := range 3 {
		got.Reset()
		want.Reset()
		for i := range 500 {
			v := value(i + round)
			got.AppendValue(int64(i), func(dst []byte) []byte {
				if len(dst) != 0 || cap(dst) < minFree {
					t.Fatalf("record %d: given %d bytes of %d", i, len(dst), cap(dst))
				}
				if v == nil {
					return nil
				}
				return append(dst, v...)
			})
			want.AppendParts(nil, v, int64(i), nil)
		}
		if got.Len() != want.Len() || got.Bytes() != want.Bytes() {
			t.Fatalf("round %d: %d records of %d bytes, want %d of %d", round, got.Len(), got.Bytes(), want.Len(), want.Bytes())
		}
		for i, r := range got.Records {
			w := want.Records[i]
			if !bytes.Equal(r.Value, w.Value) || (r.Value == nil) != (w.Value == nil) || r.Timestamp != w.Timestamp || r.Key != nil {
				t.Fatalf("round %d, record %d: value %q at %d, want %q at %d", round, i, r.Value, r.Timestamp, w.Value, w.Timestamp)
			}
			if cap(r.Value) != len(r.Value) {
				t.Fatalf("round %d, record %d: value has %d bytes of capacity past it", round, i, cap(r.Value)-len(r.Value))
			}
		}
	}
}

// BenchmarkBatchAppend compares writing a value elsewhere and copying it
// with writing it in place.
func BenchmarkBatchAppend(b *testing.B) {
	v := bytes.Repeat([]byte("v"), 330)
	write := func(dst []byte) []byte { return append(dst, v...) }
	b.Run("parts", func(b *testing.B) {
		var batch Batch
		var scratch []byte
		for b.Loop() {
			if batch.Len() == 1024 {
				batch.Reset()
			}
			scratch = write(scratch[:0])
			batch.AppendParts(nil, scratch, 1, nil)
		}
	})
	b.Run("value", func(b *testing.B) {
		var batch Batch
		for b.Loop() {
			if batch.Len() == 1024 {
				batch.Reset()
			}
			batch.AppendValue(1, write)
		}
	})
}
