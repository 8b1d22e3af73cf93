package state

import "encoding/binary"

// store is a backend: the bytes of every state of one subtask, by key group
// and composite key (see compositeKey). Point entries hold a value or a
// list's concatenated elements; sub entries are a map state's entries under
// a composite key and a user key. A store belongs to its Keyed's goroutine;
// slices it returns are valid until its next call.
type store interface {
	get(kg int, k []byte) ([]byte, bool, error)
	put(kg int, k, v []byte) error
	// appendTo concatenates v to the point entry (creating it).
	appendTo(kg int, k, v []byte) error
	del(kg int, k []byte) error
	subGet(kg int, k, uk []byte) ([]byte, bool, error)
	subPut(kg int, k, uk, v []byte) error
	subDel(kg int, k, uk []byte) error
	// subRange calls fn for each sub entry of k in user key order; fn must
	// not change the store.
	subRange(kg int, k []byte, fn func(uk, v []byte) error) error
	subClear(kg int, k []byte) error
	// sweep drops expired data from up to n entries from where the last
	// sweep stopped; n < 0 visits every entry.
	sweep(n int) error
	// snapshot captures a consistent view of every entry.
	snapshot() (storeSnapshot, error)
	// bytes is the memory the store accounts (0 for disk).
	bytes() int64
	budgetBytes() int64
	stats() Stats
	close() error
}

// storeSnapshot is a store's consistent view. each and release may run on
// another goroutine than the store's, once.
type storeSnapshot interface {
	// each calls fn for every entry of key group kg; sub entries have
	// sub set. Slices are valid only during the call of fn.
	each(kg int, fn func(k, uk, v []byte, sub bool) error) error
	release()
}

// A composite key names the state of one state id, key and namespace:
//
//	u16 state | u32 key length | key | u32 namespace length | namespace
//
// big-endian, so that on disk a state's entries sort together. The lengths
// make it unambiguous, and a map state's user key can follow it.
const ckHead = 2

// compositeKey appends the composite key of (state, key, ns).
func compositeKey(dst []byte, state uint16, key, ns []byte) []byte {
	dst = binary.BigEndian.AppendUint16(dst, state)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(key)))
	dst = append(dst, key...)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(ns)))
	return append(dst, ns...)
}

// stateOf is the state id of a composite key.
func stateOf(k []byte) uint16 { return binary.BigEndian.Uint16(k) }

// splitComposite returns the key and namespace of a composite key and what
// follows it (a user key); ok is false when k is not one.
func splitComposite(k []byte) (key, ns, rest []byte, ok bool) {
	if len(k) < ckHead+4 {
		return nil, nil, nil, false
	}
	n := binary.BigEndian.Uint32(k[ckHead:])
	k = k[ckHead+4:]
	if uint64(n)+4 > uint64(len(k)) {
		return nil, nil, nil, false
	}
	key, k = k[:n], k[n:]
	n = binary.BigEndian.Uint32(k)
	k = k[4:]
	if uint64(n) > uint64(len(k)) {
		return nil, nil, nil, false
	}
	return key, k[:n], k[n:], true
}
