package nexmark

import (
	"math/bits"
	"slices"
)

// digitPairs are the numbers 00 to 99, two characters each.
const digitPairs = "00010203040506070809" +
	"10111213141516171819" +
	"20212223242526272829" +
	"30313233343536373839" +
	"40414243444546474849" +
	"50515253545556575859" +
	"60616263646566676869" +
	"70717273747576777879" +
	"80818283848586878889" +
	"90919293949596979899"

// powersOf10 are 10^0 to 10^19, every power of 10 a uint64 holds.
var powersOf10 = func() (p [20]uint64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()

// decimalLen is the number of decimal digits of u.
func decimalLen(u uint64) int {
	// bits.Len64 * log10(2) (1233/4096) is the number of digits or one
	// less; the power of 10 tells which (u|1 is below it just when u is,
	// and counts 0 as a digit).
	u |= 1
	t := bits.Len64(u) * 1233 >> 12
	if u < powersOf10[t] {
		return t
	}
	return t + 1
}

// appendInt appends n in decimal to dst, as strconv.AppendInt(dst, n, 10)
// does, but writes the digits in place: strconv's formatting into a buffer
// of its own and the copy out of it were a quarter of the generator's time.
func appendInt(dst []byte, n int64) []byte {
	u := uint64(n)
	if n < 0 {
		dst = append(dst, '-')
		u = -u
	}
	k := decimalLen(u)
	dst = slices.Grow(dst, k)
	i := len(dst) + k
	dst = dst[:i]
	for u >= 100 {
		q := u / 100
		p := (u - q*100) * 2
		i -= 2
		dst[i], dst[i+1] = digitPairs[p], digitPairs[p+1]
		u = q
	}
	if u >= 10 {
		dst[i-2], dst[i-1] = digitPairs[2*u], digitPairs[2*u+1]
	} else {
		dst[i-1] = byte('0' + u)
	}
	return dst
}
