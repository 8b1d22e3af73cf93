package nexmark

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
	"math/bits"
	"strconv"
	"testing"
)

// The events of a seed are part of the generator's contract: a job
// restored from a savepoint taken by an earlier version goes on with the
// same events, and published figures stay comparable. The digests are of
// the first 100,000 events' JSON, one after the other.
func TestGeneratorEventsAreStable(t *testing.T) {
	for _, c := range []struct {
		cfg    Config
		digest string
	}{
		{Config{Seed: 1}, "ab8be9e5b921176f9214197ddb1e5f1607bcb2c562bf2ac881ceb59f496a399e"},
		{Config{Seed: 42, OutOfOrderGroup: 7}, "7562647c8bc4b3e48282f2dee2d9e775854c940e19da8c4a4da43ea85086dfe6"},
	} {
		g, err := New(c.cfg)
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.New()
		var buf []byte
		for i := range int64(100_000) {
			buf = g.AppendEvent(buf[:0], i)
			h.Write(buf)
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != c.digest {
			t.Errorf("seed %d: events digest %s, want %s", c.cfg.Seed, got, c.digest)
		}
	}
}

// pow10 is math.Pow(10, y) bit for bit over the prices' range.
func TestPow10(t *testing.T) {
	r := newRNG(7, eventStream, 0)
	ys := []float64{0, 0.5, 1, 1.5, 2, 2.5, 3, 4, 5, 5.5, math.Nextafter(6, 0), math.Nextafter(0.5, 1), math.Nextafter(0.5, 0), 1e-300}
	for range 2_000_000 {
		ys = append(ys, r.float()*6)
	}
	for _, y := range ys {
		if got, want := pow10(y), math.Pow(10, y); math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("pow10(%v) = %v, math.Pow gives %v", y, got, want)
		}
	}
}

// priceOf is round(pow10(y) * 100) over the prices' range: at random, and
// at the nine floats nearest to the halfway point above each of 200,000
// prices (log-uniform, or uniform below $10), where its estimate cannot
// settle the rounding.
func TestPriceOf(t *testing.T) {
	exact := func(y float64) int64 { return int64(math.Round(pow10(y) * 100)) }
	r := newRNG(11, eventStream, 0)
	ys := []float64{0, 0.5, 1, 5, math.Nextafter(6, 0), 1e-300}
	for range 2_000_000 {
		ys = append(ys, r.float()*6)
	}
	for range 200_000 {
		p := int64(math.Round(math.Pow(10, 2+6*r.float())))
		if p < 1000 {
			p = 100 + int64(r.intn(900))
		}
		y := math.Log10((float64(p) + 0.5) / 100)
		for range 4 {
			y = math.Nextafter(y, 0)
		}
		for range 9 {
			if y >= 0 && y < 6 {
				ys = append(ys, y)
			}
			y = math.Nextafter(y, 6)
		}
	}
	for _, y := range ys {
		if got, want := priceOf(y), exact(y); got != want {
			t.Fatalf("priceOf(%v) = %d, want %d", y, got, want)
		}
	}
}

// priceSum keeps BenchmarkPrice's prices from being optimised away.
var priceSum int64

// BenchmarkPrice compares a price computed as the reference does with
// priceOf's settled estimate, over the same draws.
func BenchmarkPrice(b *testing.B) {
	b.Run("exact", func(b *testing.B) {
		r := newRNG(1, eventStream, 0)
		for b.Loop() {
			priceSum += int64(math.Round(pow10(r.float()*6) * 100))
		}
	})
	b.Run("estimate", func(b *testing.B) {
		r := newRNG(1, eventStream, 0)
		for b.Loop() {
			priceSum += r.price()
		}
	})
}

func TestAppendInt(t *testing.T) {
	values := []int64{0, 1, -1, 9, 10, -10, 99, 100, 101, math.MaxInt64, math.MinInt64, math.MinInt64 + 1}
	for _, p := range powersOf10[1:] {
		n := int64(p)
		if p > math.MaxInt64 {
			break
		}
		values = append(values, n-1, n, n+1, -n, -n+1)
	}
	r := newRNG(7, eventStream, 0)
	for range 100_000 {
		values = append(values, int64(r.next())>>r.intn(64))
	}
	for _, n := range values {
		for _, room := range []int{0, 3, 40} {
			dst := append(make([]byte, 0, 2+room), "x:"...)
			if got, want := string(appendInt(dst, n)), "x:"+strconv.FormatInt(n, 10); got != want {
				t.Fatalf("appendInt(%d) with room %d = %q, want %q", n, room, got, want)
			}
		}
	}
}

// intSink keeps BenchmarkAppendInt's output from being optimised away.
var intSink []byte

// BenchmarkAppendInt formats the generator's integers of a bid (its event
// time, auction, bidder and price) with strconv and in place.
func BenchmarkAppendInt(b *testing.B) {
	values := [...]int64{1_600_000_123_456, 1_000_123, 1_004_567, 28_731}
	dst := make([]byte, 0, 64)
	b.Run("strconv", func(b *testing.B) {
		for b.Loop() {
			dst = dst[:0]
			for _, n := range values {
				dst = strconv.AppendInt(dst, n, 10)
			}
		}
		intSink = dst
	})
	b.Run("inplace", func(b *testing.B) {
		for b.Loop() {
			dst = dst[:0]
			for _, n := range values {
				dst = appendInt(dst, n)
			}
		}
		intSink = dst
	})
}

// TestChannelURLs checks every channel's URL, as a bid writes it from the
// drawn path kept for it, against the URL drawn whole from the channel's
// stream.
func TestChannelURLs(t *testing.T) {
	for _, seed := range []int64{0, 1, 42} {
		urls := newChannelURLs(seed)
		for ch := range channels {
			u := newRNG(seed, channelStream, int64(ch))
			want := string(u.appendURL(nil))
			if u.intn(10) > 0 {
				id := int64(int32(bits.Reverse32(uint32(ch))))
				want += "&channel_id=" + strconv.FormatInt(max(id, -id), 10)
			}
			got := string(appendColdChannel(nil, urls, ch))
			if wantMember := `"channel":"channel-` + strconv.Itoa(ch) + `","url":"` + want + `"`; got != wantMember {
				t.Fatalf("seed %d channel %d: %s, want %s", seed, ch, got, wantMember)
			}
		}
	}
}
