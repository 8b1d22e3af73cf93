package abi

// Batch is a reusable list of records whose bytes the batch owns. Appending
// copies a record's bytes into chunked arenas, so records appended earlier
// stay valid while the batch grows; Reset keeps the memory for reuse, which
// makes a batch allocation-free once it has reached its working size.
type Batch struct {
	Records []Record
	chunks  [][]byte
	cur     int
	headers []Header
	bytes   int
}

const minChunk = 64 << 10

// Reset empties the batch, keeping its memory. Records taken from it before
// are invalid afterwards.
func (b *Batch) Reset() {
	b.Records = b.Records[:0]
	for i := range b.chunks {
		b.chunks[i] = b.chunks[i][:0]
	}
	b.cur = 0
	b.headers = b.headers[:0]
	b.bytes = 0
}

// Len is the number of records.
func (b *Batch) Len() int { return len(b.Records) }

// Bytes is the encoded size of the records (their Size sum).
func (b *Batch) Bytes() int { return b.bytes }

// alloc returns n bytes of arena space that stay valid until Reset.
func (b *Batch) alloc(n int) []byte {
	for b.cur < len(b.chunks) {
		c := b.chunks[b.cur]
		if cap(c)-len(c) >= n {
			b.chunks[b.cur] = c[:len(c)+n]
			return c[len(c) : len(c)+n : len(c)+n]
		}
		b.cur++
	}
	size := minChunk
	if n > size {
		size = n
	}
	c := make([]byte, n, size)
	b.chunks = append(b.chunks, c)
	b.cur = len(b.chunks) - 1
	return c[:n:n]
}

func (b *Batch) copyBytes(src []byte) []byte {
	if src == nil {
		return nil
	}
	dst := b.alloc(len(src))
	copy(dst, src)
	return dst
}

// Append copies r into the batch.
func (b *Batch) Append(r *Record) {
	b.AppendParts(r.Key, r.Value, r.Timestamp, r.Headers)
}

// AppendParts copies a record given by its parts into the batch.
func (b *Batch) AppendParts(key, value []byte, ts int64, headers []Header) {
	rec := Record{Key: b.copyBytes(key), Value: b.copyBytes(value), Timestamp: ts}
	if len(headers) > 0 {
		start := len(b.headers)
		for _, h := range headers {
			b.headers = append(b.headers, Header{Name: b.copyBytes(h.Name), Value: b.copyBytes(h.Value)})
		}
		// Full slice expression: a later append to b.headers must not
		// overwrite this record's headers through a shared backing array.
		rec.Headers = b.headers[start:len(b.headers):len(b.headers)]
	}
	b.Records = append(b.Records, rec)
	b.bytes += rec.Size()
}

// minFree is the arena space AppendValue offers a value at least, so that
// a value of that size or less is written in place.
const minFree = 4 << 10

// AppendValue appends a record without key or headers whose value write
// appends to the empty slice it is given and returns, written straight into
// the batch's arena: it saves the copy AppendParts makes of a value built
// elsewhere. A value that outgrows the space it was given is copied.
func (b *Batch) AppendValue(ts int64, write func(dst []byte) []byte) {
	free := b.free(minFree)
	v := write(free)
	if len(v) > 0 && len(v) <= cap(free) && &v[0] == &free[:1][0] {
		v = b.alloc(len(v)) // the bytes already written, taken
	} else {
		v = b.copyBytes(v)
	}
	rec := Record{Value: v, Timestamp: ts}
	b.Records = append(b.Records, rec)
	b.bytes += rec.Size()
}

// free returns the empty arena space after the last bytes taken, with room
// for at least n bytes: what alloc takes next.
func (b *Batch) free(n int) []byte {
	for ; b.cur < len(b.chunks); b.cur++ {
		if c := b.chunks[b.cur]; cap(c)-len(c) >= n {
			return c[len(c):len(c):cap(c)]
		}
	}
	b.chunks = append(b.chunks, make([]byte, 0, max(minChunk, n)))
	b.cur = len(b.chunks) - 1
	return b.chunks[b.cur][:0]
}

// Truncate drops the records after the first n. Their arena bytes stay
// allocated until Reset.
func (b *Batch) Truncate(n int) {
	for i := n; i < len(b.Records); i++ {
		b.bytes -= b.Records[i].Size()
	}
	b.Records = b.Records[:n]
}
