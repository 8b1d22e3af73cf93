package host

import (
	"context"

	"github.com/tetratelabs/wazero/experimental"
)

// linearMemory backs the linear memory of one instance, as wazero's
// experimental.MemoryAllocator (it allocates exactly one memory, itself).
// Every byte the guest has is reserved from the Host's memory budget before
// the guest gets it, and given back when the instance is closed: a
// memory.grow the budget cannot cover fails (memory.grow returns -1) instead
// of growing the process.
//
// Where the platform allows (linearmem_linux.go) the memory is an anonymous
// mapping of the memory's maximum, inaccessible until grown into: growing
// makes more of it accessible in place, so nothing is copied and no old
// buffer waits for the garbage collector, and closing unmaps it, which gives
// it back to the OS at once. Elsewhere (or when the mapping fails) it is a
// Go slice, copied when it grows past its capacity; closing such a memory
// asks the Host's trimmer to return the freed heap to the OS.
//
// wazero calls Allocate once, during instantiation, and Reallocate and Free
// on the goroutine that owns the instance (or closes it).
type linearMemory struct {
	host *Host
	// reserved is what the memory holds of the budget: at least len(buf).
	reserved int64
	buf      []byte
	// mapping is the address range of the memory's maximum, when mapped.
	mapping []byte
	// refused is the size a grow asked for that the budget refused, 0 if
	// none was: a failure of the instance after it is reported as running
	// out of memory.
	refused uint64
	freed   bool
}

// newLinearMemory makes the memory of an instance about to be instantiated,
// with initial bytes already reserved from the budget.
func newLinearMemory(h *Host, initial int64) *linearMemory {
	return &linearMemory{host: h, reserved: initial}
}

// Allocate implements experimental.MemoryAllocator: it reserves the address
// range of the maximum, when memory is mapped.
func (l *linearMemory) Allocate(_, maximum uint64) experimental.LinearMemory {
	if l.host.mapMemory {
		l.mapping = mapRange(maximum)
	}
	return l
}

// Reallocate implements experimental.LinearMemory: it grows the memory to
// size bytes once the budget has them, or returns nil.
func (l *linearMemory) Reallocate(size uint64) []byte {
	if size <= uint64(len(l.buf)) {
		return l.buf[:size]
	}
	need := int64(size) - l.reserved
	if need > 0 {
		if !l.host.reserveGuestMemory(need) {
			l.refused = size
			return nil
		}
		l.reserved += need
	}
	var buf []byte
	if l.mapping != nil {
		buf = commitRange(l.mapping, uint64(len(l.buf)), size)
		if buf == nil {
			// The OS refused: go on in a Go slice.
			buf = l.growSlice(size)
			unmapRange(l.mapping)
			l.mapping = nil
		}
	} else {
		buf = l.growSlice(size)
	}
	l.buf = buf
	return buf
}

// growSlice grows a memory held in a Go slice, with room for growing by a
// quarter more before it is copied again.
func (l *linearMemory) growSlice(size uint64) []byte {
	if size <= uint64(cap(l.buf)) {
		return l.buf[:size]
	}
	buf := make([]byte, size, size+size/4)
	copy(buf, l.buf)
	return buf
}

// Free implements experimental.LinearMemory: it unmaps (or drops) the
// memory and gives its reservation back. It runs when the instance is
// closed, and at most once.
func (l *linearMemory) Free() {
	if l.freed {
		return
	}
	l.freed = true
	held := len(l.buf)
	if l.mapping != nil {
		unmapRange(l.mapping)
		l.mapping = nil
	}
	l.buf = nil
	l.host.budget.release(l.reserved)
	l.reserved = 0
	if held > 0 && !l.host.mapMemory {
		l.host.trim.request()
	}
}

// reserveGuestMemory takes n bytes from the budget for a guest's memory.
// When the budget is short it closes the idle instances, whose memories
// hold part of it, and tries once more.
func (h *Host) reserveGuestMemory(n int64) bool {
	if h.budget.tryReserve(n) {
		return true
	}
	if h.evictIdle(context.Background()) == 0 {
		return false
	}
	return h.budget.tryReserve(n)
}

// evictIdle closes every idle instance and returns how many it closed.
// It takes the Host's, each Module's and each compiled's lock in turn,
// never one inside another, so it may run from within a guest's call.
func (h *Host) evictIdle(ctx context.Context) int {
	h.mu.Lock()
	mods := make([]*Module, 0, len(h.modules))
	for _, e := range h.modules {
		select {
		case <-e.ready:
			if e.mod != nil {
				mods = append(mods, e.mod)
			}
		default:
		}
	}
	h.mu.Unlock()
	var codes []*compiled
	for _, m := range mods {
		m.mu.Lock()
		for _, c := range m.compiled {
			codes = append(codes, c)
		}
		m.mu.Unlock()
	}
	closed := 0
	for _, c := range codes {
		c.mu.Lock()
		idle := c.idle
		c.idle = nil
		c.mu.Unlock()
		for _, inst := range idle {
			if err := inst.close(ctx); err != nil {
				h.log.Warn("close idle instance", "module", c.mod.ID, "error", err)
			}
			closed++
		}
	}
	return closed
}
