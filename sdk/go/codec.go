package udf

import (
	"encoding/binary"
	"fmt"
)

// BinaryCodec encodes accumulators of a fixed-size type A (numbers, bools,
// arrays and structs of them) with encoding/binary, little-endian. It is
// the simplest Codec; one written by hand is faster.
func BinaryCodec[A any]() Codec[A] { return binaryCodec[A]{} }

type binaryCodec[A any] struct{}

func (binaryCodec[A]) Append(dst []byte, acc *A) []byte {
	out, err := binary.Append(dst, binary.LittleEndian, acc)
	if err != nil {
		panic(fmt.Sprintf("udf: BinaryCodec: %v", err))
	}
	return out
}

func (binaryCodec[A]) Decode(b []byte, acc *A) error {
	n, err := binary.Decode(b, binary.LittleEndian, acc)
	if err != nil {
		return fmt.Errorf("udf: BinaryCodec: %w", err)
	}
	if n != len(b) {
		return fmt.Errorf("udf: BinaryCodec: %d bytes left over", len(b)-n)
	}
	return nil
}
