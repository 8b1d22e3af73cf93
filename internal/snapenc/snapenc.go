// Package snapenc reads and writes the little-endian fields of the
// platform's snapshot formats (window contents, join buffers, watermark
// generators), with bounds checks on every read so that a truncated or
// corrupt snapshot is an error, never a panic.
package snapenc

import (
	"encoding/binary"
	"fmt"
	"math"
)

// AppendBytes appends b with its u32 length, as Decoder.Bytes reads it.
func AppendBytes(dst, b []byte) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(b)))
	return append(dst, b...)
}

// Decoder reads a snapshot (little-endian) with bounds checks.
type Decoder struct {
	B       []byte
	Version byte
	Err     error
}

func (d *Decoder) Take(n int) []byte {
	if d.Err != nil || n > len(d.B) {
		if d.Err == nil {
			d.Err = fmt.Errorf("truncated")
		}
		return make([]byte, n)
	}
	v := d.B[:n]
	d.B = d.B[n:]
	return v
}

func (d *Decoder) U8() byte    { return d.Take(1)[0] }
func (d *Decoder) U32() uint32 { return binary.LittleEndian.Uint32(d.Take(4)) }
func (d *Decoder) I64() int64  { return int64(binary.LittleEndian.Uint64(d.Take(8))) }
func (d *Decoder) F64() float64 {
	return math.Float64frombits(binary.LittleEndian.Uint64(d.Take(8)))
}

func (d *Decoder) Bytes() []byte {
	n := d.U32()
	if d.Err != nil || int(n) > len(d.B) {
		d.Err = fmt.Errorf("truncated")
		return nil
	}
	return d.Take(int(n))
}
