package abi

import (
	"math/bits"
	"testing"
)

// FuzzKeepBitmap: a bitmap CheckKeepBitmap accepts for n records keeps
// exactly the records of its set bits, all below n; one it refuses has the
// wrong length or a bit set past n-1.
func FuzzKeepBitmap(f *testing.F) {
	f.Add([]byte{}, uint8(0))
	f.Add([]byte{0x05}, uint8(3))
	f.Add([]byte{0x0f}, uint8(3))
	f.Add([]byte{0xff, 0x01}, uint8(9))
	f.Add([]byte{0xff}, uint8(16))
	f.Fuzz(func(t *testing.T, bitmap []byte, records uint8) {
		n := int(records)
		set := 0
		for _, b := range bitmap {
			set += bits.OnesCount8(b)
		}
		err := CheckKeepBitmap(bitmap, n)
		if len(bitmap) != KeepBitmapLen(n) {
			if err == nil {
				t.Fatalf("%d bytes for %d records accepted", len(bitmap), n)
			}
			return
		}
		kept := 0
		for i := range n {
			if Keeps(bitmap, i) {
				kept++
			}
		}
		if (err == nil) != (kept == set) {
			t.Fatalf("bitmap %x for %d records: error %v, %d of %d set bits below %d", bitmap, n, err, kept, set, n)
		}
		if err == nil {
			again := make([]byte, len(bitmap))
			for i := range n {
				if Keeps(bitmap, i) {
					Keep(again, i)
				}
			}
			if string(again) != string(bitmap) {
				t.Fatalf("Keep rebuilds %x from %x", again, bitmap)
			}
		}
	})
}
