//go:build !linux

package host

// mapMemoryDefault says whether guest memories are mappings (linearmem.go):
// only on Linux; elsewhere they are Go slices.
const mapMemoryDefault = false

func mapRange(uint64) []byte { return nil }

func commitRange([]byte, uint64, uint64) []byte { return nil }

func unmapRange([]byte) {}
