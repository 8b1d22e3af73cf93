package abi

import "fmt"

// A custom evictor (Flink's Evictor, with evictBefore and evictAfter) is a
// function of kind evictor. It gets a grouped frame whose op says when it
// runs (OpEvictBefore: before the window function; OpEvictAfter: after
// it), whose watermark is the operator's, and whose groups are the windows
// that fire: each with its key, its bounds (GroupWindow) and its records in
// the order they were added. It answers each group with one TagAccumulator
// entry whose bytes are a keep bitmap (KeepBitmapLen bytes; bit i%8 of byte
// i/8 set keeps record i, clear evicts it), or with an error entry. What
// it evicts leaves the window's contents. docs/ABI.md, Evictors, is the
// spec.
const KindEvictor Kind = "evictor"

// Ops of an evictor's grouped frame. They are interpreted for that kind
// only, as OpAdd, OpMerge and OpResult are for aggregate and reduce.
const (
	OpEvictBefore Op = 8
	OpEvictAfter  Op = 9
)

// KeepBitmapLen is the length of the keep bitmap of a window of n records.
func KeepBitmapLen(n int) int { return (n + 7) / 8 }

// Keeps reports whether bitmap keeps record i.
func Keeps(bitmap []byte, i int) bool { return bitmap[i/8]&(1<<(i%8)) != 0 }

// Keep sets record i's bit in bitmap.
func Keep(bitmap []byte, i int) { bitmap[i/8] |= 1 << (i % 8) }

// CheckKeepBitmap checks that bitmap is the keep bitmap of a window of n
// records: its length, and no bit set past record n-1.
func CheckKeepBitmap(bitmap []byte, n int) error {
	if len(bitmap) != KeepBitmapLen(n) {
		return fmt.Errorf("keep bitmap of %d bytes for %d records, want %d", len(bitmap), n, KeepBitmapLen(n))
	}
	if r := n % 8; r != 0 && bitmap[len(bitmap)-1]>>r != 0 {
		return fmt.Errorf("keep bitmap sets bits past record %d", n-1)
	}
	return nil
}
