package host

import "syscall"

// mapMemoryDefault says whether guest memories are mappings (linearmem.go).
const mapMemoryDefault = true

// mapRange reserves size bytes of address space, inaccessible and charged
// to nothing until committed; nil if the OS refuses.
func mapRange(size uint64) []byte {
	if size == 0 || size > 1<<32 {
		return nil
	}
	b, err := syscall.Mmap(-1, 0, int(size), syscall.PROT_NONE, syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS|syscall.MAP_NORESERVE)
	if err != nil {
		return nil
	}
	return b
}

// commitRange makes bytes [from, to) of a mapping readable and writable
// (they read as zeros until written) and returns its first to bytes; nil if
// the OS refuses. from and to are multiples of the Wasm page size, itself a
// multiple of the OS page size.
func commitRange(mapping []byte, from, to uint64) []byte {
	if to > from {
		if err := syscall.Mprotect(mapping[from:to], syscall.PROT_READ|syscall.PROT_WRITE); err != nil {
			return nil
		}
	}
	return mapping[:to:to]
}

// unmapRange returns a mapping's pages to the OS.
func unmapRange(mapping []byte) {
	// Munmap of a range mapRange returned fails only for an invalid range.
	_ = syscall.Munmap(mapping)
}
