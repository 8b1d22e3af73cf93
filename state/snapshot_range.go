package state

import "encoding/binary"

// SnapshotRange reads the max parallelism and the key groups a snapshot
// (written by Snapshot.WriteTo) covers from its header, without reading
// its entries: a replay of one key opens only the snapshot that holds
// the key's key group.
func SnapshotRange(data []byte) (maxParallelism int, r Range, err error) {
	const head = 4 + 1 + 4 + 4 + 4
	if len(data) < head {
		return 0, Range{}, malformed("truncated header: %d bytes", len(data))
	}
	if string(data[:4]) != snapMagic {
		return 0, Range{}, malformed("not a state snapshot")
	}
	if data[4] != snapVersion {
		return 0, Range{}, malformed("version %d, want %d", data[4], snapVersion)
	}
	maxP := binary.LittleEndian.Uint32(data[5:])
	first, last := binary.LittleEndian.Uint32(data[9:]), binary.LittleEndian.Uint32(data[13:])
	if maxP < 1 || maxP > MaxKeyGroups || first > last || last >= maxP {
		return 0, Range{}, malformed("key groups [%d, %d] of %d", first, last, maxP)
	}
	return int(maxP), Range{First: int(first), Last: int(last)}, nil
}
