package nexmark

import (
	"math"
	"math/bits"
)

// rng is a splitmix64 generator, seeded for each event from the seed and
// the event number.
type rng uint64

const golden = 0x9e3779b97f4a7c15

func mix64(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

func newRNG(seed int64, stream uint64, n int64) rng {
	return rng(mix64(uint64(seed)*golden ^ mix64(stream^mix64(uint64(n)+golden))))
}

// Streams of random numbers: one for the events, one for each channel's
// URL, so that a channel's URL does not depend on the event naming it.
const (
	eventStream   = 0
	channelStream = 0x6e65786d61726b // "nexmark"
)

func (r *rng) next() uint64 {
	*r += golden
	return mix64(uint64(*r))
}

// intn returns a number in [0, n); n must be positive.
func (r *rng) intn(n int) int { return int(r.next() % uint64(n)) }

// int63n returns a number in [0, n); n must be positive.
func (r *rng) int63n(n int64) int64 { return int64(r.next() % uint64(n)) }

// float returns a number in [0, 1).
func (r *rng) float() float64 { return float64(r.next()>>11) / (1 << 53) }

// price is a price in cents, log-uniform from $1 to $1,000,000, as the
// reference draws them: round(10^(6u) * 100).
func (r *rng) price() int64 { return priceOf(r.float() * 6) }

// priceOf is round(pow10(y) * 100) for y in [0, 6), the reference's price,
// mostly without pow10's math.Exp (about a fifth of the generator's time): an
// estimate of 10^y * 100 within a few units in 10^15 of it settles the
// rounding whenever it is not within priceMargin of halfway between two
// integers; closer, the price is computed as the reference does.
func priceOf(y float64) int64 {
	a := pow10Estimate(y) * 100
	whole := math.Floor(a)
	if d := a - whole - 0.5; d > a*priceMargin {
		return int64(whole) + 1
	} else if d < -a*priceMargin {
		return int64(whole)
	}
	return int64(math.Round(pow10(y) * 100))
}

// priceMargin bounds the relative distance of pow10Estimate's and pow10's
// results from 10^y with two orders of magnitude to spare: the estimate is
// within about 4e-15 of it, pow10 (math.Pow's steps) within 1e-15.
const priceMargin = 0x1p-40

// log2of10 is log2(10), to turn a power of 10 into one of 2.
var log2of10 = math.Log2(10)

// exp2Steps are 2^(j/256) for j below 256.
var exp2Steps = func() (t [256]float64) {
	for j := range t {
		t[j] = math.Exp2(float64(j) / 256)
	}
	return t
}()

// pow10Estimate is 10^y for y in [0, 6) within about 4e-15 of it: 10^y =
// 2^t = 2^k * 2^(j/256) * 2^r for t = y*log2(10), an integer k, j below
// 256 and r below 1/256, with 2^(j/256) from a table and 2^r = e^(r ln 2)
// from five terms of its series (the sixth is below 1.3e-15).
func pow10Estimate(y float64) float64 {
	t := y * log2of10
	steps := math.Floor(t * 256)
	x := (t - steps/256) * math.Ln2 // t - steps/256 is exact
	e := 1 + x*(1+x*(1.0/2+x*(1.0/6+x*(1.0/24))))
	n := int(steps)
	return math.Float64frombits(uint64(1023+n>>8)<<52) * exp2Steps[n&255] * e
}

// ln10 is math.Log(10), as math.Pow computes it for a power of 10.
var ln10 = math.Log(10)

// tenToTheTwoToThe are 10^1, 10^2 and 10^4 as a fraction in [0.5, 1) and
// a power of two (all exact): the factors of 10^n for n below 8.
var tenToTheTwoToThe = [3]struct {
	frac float64
	exp  int
}{{0.625, 4}, {0.78125, 7}, {0.6103515625, 14}}

// pow10 is math.Pow(10, y) for y in [0, 6), bit for bit, about a fifth
// cheaper (math.Pow was a third of the generator's time): math.Pow splits y
// into an integer n and a fraction f in (-0.5, 0.5], takes exp(f * ln 10),
// then multiplies in the factors of 10^n, smallest first, keeping the
// powers of two apart; this does the same with ln 10 computed once, and
// gives y = 0.5 the square root, as math.Pow does.
func pow10(y float64) float64 {
	if y == 0.5 {
		return math.Sqrt(10)
	}
	n, f := math.Modf(y)
	if f > 0.5 {
		n, f = n+1, f-1
	}
	a, exp := 1.0, 0
	if f != 0 {
		a = math.Exp(f * ln10)
	}
	for i, bits := 0, int(n); bits != 0; i, bits = i+1, bits>>1 {
		if bits&1 == 1 {
			a *= tenToTheTwoToThe[i].frac
			exp += tenToTheTwoToThe[i].exp
		}
	}
	return math.Ldexp(a, exp)
}

// minString is the least length drawn for a random string.
const minString = 3

// appendString appends a random string of lowercase letters and about one
// special in 13 characters, of 3 to maxLen-1 characters, with spaces
// trimmed from both ends when special is a space.
func (r *rng) appendString(dst []byte, maxLen int, special byte) []byte {
	start := len(dst)
	for n := minString + r.intn(maxLen-minString); n > 0; n-- {
		if r.intn(13) == 0 {
			dst = append(dst, special)
		} else {
			dst = append(dst, byte('a'+r.intn(26)))
		}
	}
	if special != ' ' {
		return dst
	}
	end := len(dst)
	for end > start && dst[end-1] == ' ' {
		end--
	}
	lead := start
	for lead < end && dst[lead] == ' ' {
		lead++
	}
	n := copy(dst[start:], dst[lead:end])
	return dst[:start+n]
}

// filler holds random lowercase letters that extra fields are cut from.
var filler = func() string {
	b := make([]byte, 4*maxAvgSize)
	r := newRNG(0, channelStream, -1)
	for i := range b {
		b[i] = byte('a' + r.intn(26))
	}
	return string(b)
}()

// appendExtra appends letters that bring an event of size bytes (as the
// reference counts them) to avg bytes on average: uniformly within 20% of
// the difference, nothing when size exceeds avg.
func (r *rng) appendExtra(dst []byte, size, avg int) []byte {
	if size > avg {
		return dst
	}
	want := avg - size
	delta := int(math.Round(float64(want) * 0.2))
	n := want - delta
	if delta > 0 {
		n += r.intn(2 * delta)
	}
	off := r.intn(len(filler) - n)
	return append(dst, filler[off:off+n]...)
}

// Channels: a bid comes from one of the hot channels (and its URL) with
// probability 1 - 1/hotChannels, else from "channel-N" for N below
// channels.
var hotChannelNames = [...]string{"Google", "Facebook", "Baidu", "Apple"}

// channelURLs are the parts of the channels' URLs drawn at random, for one
// seed: those of the hot channels whole, and of each other channel its
// path, which with the flag of its channel_id fits in 16 bytes. (Whole
// members for every channel, 850 KB, were no faster in a job than drawing
// them again: reading them back missed the processor's caches. These take
// 160 KB, at most a cache line for a bid of a channel that is not hot.)
type channelURLs struct {
	hot  [len(hotChannelNames)]string
	cold [channels]coldURL
}

// coldURL is the path of a channel's URL, three segments each with its
// slash: its length in the low bits of the first byte, whose high bit says
// that the URL ends with the channel's id, and the path after it.
type coldURL [16]byte

const urlHasChannelID = 0x80

// newChannelURLs draws the channels' URLs of seed, each from a stream of
// its own, so that a channel's URL does not depend on the event naming it.
func newChannelURLs(seed int64) *channelURLs {
	c := &channelURLs{}
	for i := range c.hot {
		u := newRNG(seed, channelStream, int64(channels+i))
		c.hot[i] = string(u.appendURL(nil))
	}
	for ch := range c.cold {
		u := newRNG(seed, channelStream, int64(ch))
		path := u.appendPath(c.cold[ch][1:1])
		c.cold[ch][0] = byte(len(path))
		if u.intn(10) > 0 {
			c.cold[ch][0] |= urlHasChannelID
		}
	}
	return c
}

// appendChannel appends the JSON string members "channel" and "url" of a
// bid.
func (r *rng) appendChannel(dst []byte, urls *channelURLs) []byte {
	if r.intn(hotChannels) == 0 {
		return appendColdChannel(dst, urls, r.intn(channels))
	}
	i := r.intn(len(hotChannelNames))
	dst = append(dst, `"channel":"`...)
	dst = append(dst, hotChannelNames[i]...)
	dst = append(dst, `","url":"`...)
	dst = append(dst, urls.hot[i]...)
	return append(dst, '"')
}

// appendColdChannel appends the members "channel" and "url" of channel ch,
// one that is not hot.
func appendColdChannel(dst []byte, urls *channelURLs, ch int) []byte {
	dst = append(dst, `"channel":"channel-`...)
	dst = appendInt(dst, int64(ch))
	dst = append(dst, `","url":"`+urlHead...)
	c := &urls.cold[ch]
	dst = append(dst, c[1:1+c[0]&^urlHasChannelID]...)
	dst = append(dst, urlTail...)
	if c[0]&urlHasChannelID != 0 {
		dst = append(dst, "&channel_id="...)
		id := int64(int32(bits.Reverse32(uint32(ch))))
		dst = appendInt(dst, max(id, -id))
	}
	return append(dst, '"')
}

// appendURL appends an item URL with three random path segments.
func (r *rng) appendURL(dst []byte) []byte {
	dst = append(dst, urlHead...)
	dst = r.appendPath(dst)
	return append(dst, urlTail...)
}

// An item URL is urlHead, a path of three segments, and urlTail.
const (
	urlHead = "https://www.nexmark.com/"
	urlTail = "item.htm?query=1"
)

// appendPath appends three random segments of 3 or 4 characters, each with
// a slash after it.
func (r *rng) appendPath(dst []byte) []byte {
	for range 3 {
		dst = r.appendString(dst, 5, '_')
		dst = append(dst, '/')
	}
	return dst
}
