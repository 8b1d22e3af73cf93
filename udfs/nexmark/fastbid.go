package main

import (
	"math/bits"
	"unsafe"
)

// Go compiled to WebAssembly pays for every function call and byte loop, so
// the bids, which are most events, have a fast path: an event laid out as
// the generator writes it (members in its order, no spaces, strings without
// escapes) is read in one pass that checks that layout, its integers and
// where its strings end. Any other event goes through json.Lookup, which
// reads any JSON. Both fill the same view.

// bidView is a bid's members: the integers, and the strings as they are
// written (with their quotes).
type bidView struct {
	auction, bidder, price, dateTime int64
	channel, url, extra              []byte
	// obj is the whole bid object.
	obj []byte
	// priceAt, channelAt and dateTimeAt are where the price's digits,
	// `,"channel":` and `,"dateTime":` start in obj when it is in the
	// generator's layout, whose integers are written as strconv writes
	// them: q0 and q1 then copy their rows' other members from it. 0 in
	// another layout.
	priceAt, channelAt, dateTimeAt int
}

// The parts of a bid event in the generator's layout.
const (
	bidEvent     = `{"event_type":2,"person":null,"auction":null,"bid":`
	bidAuction   = `{"auction":`
	bidBidder    = `,"bidder":`
	bidPrice     = `,"price":`
	bidChannel   = `,"channel":`
	bidURL       = `,"url":`
	bidDateTime  = `,"dateTime":`
	bidExtra     = `,"extra":`
	bidEventTime = `,"dateTime":`
)

// readBid reads the bid of a bid event into b; ok is false for an event of
// another type.
func readBid(v []byte, b *bidView) (ok bool, err error) {
	if fastBid(v, b) {
		return true, nil
	}
	obj, ok, err := member(v, kindBid)
	if err != nil || !ok {
		return false, err
	}
	return true, readBidObject(obj, b)
}

// readBidObject reads a bid object (the bid of an event) into b.
func readBidObject(obj []byte, b *bidView) error {
	if end, ok := fastBidObject(obj, 0, b); ok && end == len(obj) {
		return nil
	}
	if err := bid.of(obj); err != nil {
		return err
	}
	*b = bidView{bid.ints[bAuction], bid.ints[bBidder], bid.ints[bPrice], bid.ints[bDateTime],
		bid.raw(bChannel), bid.raw(bURL), bid.raw(bExtra), obj, 0, 0, 0}
	return nil
}

// fastBid reads a bid event in the generator's layout; false when v is not
// one (another event, or another layout).
func fastBid(v []byte, b *bidView) bool {
	if !literal(v, 0, bidEvent) {
		return false
	}
	i, ok := fastBidObject(v, len(bidEvent), b)
	if !ok || !literal(v, i, bidEventTime) {
		return false
	}
	_, end, ok := integer(v, i+len(bidEventTime))
	return ok && end == len(v)-1 && v[end] == '}'
}

// fastBidObject reads a bid object in the generator's layout at i, and
// returns where it ends.
func fastBidObject(v []byte, i int, b *bidView) (int, bool) {
	start := i
	if !literal(v, i, bidAuction) {
		return i, false
	}
	var ok bool
	if b.auction, i, ok = integer(v, i+len(bidAuction)); !ok || !literal(v, i, bidBidder) {
		return i, false
	}
	if b.bidder, i, ok = integer(v, i+len(bidBidder)); !ok || !literal(v, i, bidPrice) {
		return i, false
	}
	b.priceAt = i + len(bidPrice) - start
	if b.price, i, ok = integer(v, i+len(bidPrice)); !ok || !literal(v, i, bidChannel) {
		return i, false
	}
	b.channelAt = i - start
	if b.channel, i, ok = plainString(v, i+len(bidChannel)); !ok || !literal(v, i, bidURL) {
		return i, false
	}
	if b.url, i, ok = plainString(v, i+len(bidURL)); !ok || !literal(v, i, bidDateTime) {
		return i, false
	}
	b.dateTimeAt = i - start
	if b.dateTime, i, ok = integer(v, i+len(bidDateTime)); !ok || !literal(v, i, bidExtra) {
		return i, false
	}
	if b.extra, i, ok = plainString(v, i+len(bidExtra)); !ok || i >= len(v) || v[i] != '}' {
		return i, false
	}
	b.obj = v[start : i+1]
	return i + 1, true
}

// literal reports whether v holds s at i. It compares eight bytes at a
// time: a string comparison calls a byte loop in WebAssembly.
func literal(v []byte, i int, s string) bool {
	if len(v)-i < len(s) {
		return false
	}
	k := 0
	for ; k+8 <= len(s); k += 8 {
		if load(v, i+k) != loadString(s, k) {
			return false
		}
	}
	for ; k < len(s); k++ {
		if v[i+k] != s[k] {
			return false
		}
	}
	return true
}

// loadString is the eight bytes of s at i as load reads them.
func loadString(s string, i int) uint64 {
	return *(*uint64)(unsafe.Pointer(unsafe.StringData(s[i:])))
}

// integer reads a JSON integer (no fraction or exponent) of at most 18
// digits at i, as strconv writes it (no leading zeros, not -0), and returns
// where it ends. It reads eight digits at a time.
func integer(v []byte, i int) (int64, int, bool) {
	neg := i < len(v) && v[i] == '-'
	if neg {
		i++
	}
	start := i
	var n uint64
	for i+8 <= len(v) {
		d, k := digits8(load(v, i))
		n = n*pow10[k] + d
		i += k
		if k < 8 {
			break
		}
	}
	if i+8 > len(v) {
		for ; i < len(v) && v[i]-'0' <= 9; i++ {
			n = n*10 + uint64(v[i]-'0')
		}
	}
	count := i - start
	if count == 0 || count > 18 || count > 1 && v[start] == '0' || neg && n == 0 {
		return 0, i, false // 18 digits at most: no overflow to check
	}
	if neg {
		return -int64(n), i, true
	}
	return int64(n), i, true
}

// pow10 are the powers of ten up to 10^8.
var pow10 = [9]uint64{1, 10, 100, 1000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000}

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// load is the eight bytes of v at i as a little-endian word (WebAssembly's
// byte order); i+8 <= len(v).
func load(v []byte, i int) uint64 { return *(*uint64)(unsafe.Pointer(&v[i])) }

// digits8 reads the decimal digits that start the eight bytes of x (the
// first byte lowest): their value and how many there are.
func digits8(x uint64) (value uint64, n int) {
	// Up to the first byte that is not a digit, the subtraction borrows
	// nothing, and a byte is a digit when it is at most 9 after it (a
	// byte below '0' wraps to 0xd0 or more).
	d := x - '0'*ones
	nonDigit := ((d&^highs + (0x80-10)*ones) | d) & highs
	n = bits.TrailingZeros64(nonDigit) / 8
	if n == 0 {
		return 0, 0
	}
	d <<= 64 - 8*n // the digits in the high bytes, zeros below
	d = (d*10 + d>>8) & 0x00ff00ff00ff00ff
	d = (d*100 + d>>16) & 0x0000ffff0000ffff
	d = (d*10000 + d>>32) & 0xffffffff
	return d, n
}

// plainString reads a JSON string without escapes at i: its bytes with the
// quotes, and where it ends. It skips eight bytes at a time that hold no
// quote, backslash or control character.
func plainString(v []byte, i int) ([]byte, int, bool) {
	if i >= len(v) || v[i] != '"' {
		return nil, i, false
	}
	j := i + 1
	for j+8 <= len(v) && !special(load(v, j)) {
		j += 8
	}
	for ; j < len(v); j++ {
		switch c := v[j]; {
		case c == '"':
			return v[i : j+1], j + 1, true
		case c == '\\' || c < 0x20:
			return nil, i, false
		}
	}
	return nil, i, false
}

// special reports whether one of the eight bytes of x is a quote, a
// backslash or a control character (or may be: it can flag a byte after
// one that is).
func special(x uint64) bool {
	q, b := x^('"'*ones), x^('\\'*ones)
	return ((x-0x20*ones)&^x|(q-ones)&^q|(b-ones)&^b)&highs != 0
}
