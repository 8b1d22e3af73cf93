package connector

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// ErrNotAckSubject is a message whose reply subject is not a JetStream
// acknowledgement subject, so its stream sequence is unknown.
var ErrNotAckSubject = errors.New("reply subject is not a JetStream acknowledgement subject")

// ackMeta is what a source reads from a delivered message's reply subject.
type ackMeta struct {
	seq     uint64 // stream sequence
	nanos   int64  // stored at, Unix nanoseconds
	pending uint64 // messages left for the consumer
}

// Token positions after "$JS.ACK." of the stream sequence, timestamp and
// pending count. Servers since 2.9 send
// <domain>.<account>.<stream>.<consumer>.<delivered>.<seq>.<cseq>.<nanos>.<pending>.<random>,
// older ones the form without domain, account and random token.
var (
	ackShortPos = [3]int{3, 5, 6}
	ackLongPos  = [3]int{5, 7, 8}
)

// parseAckSubject reads a JetStream acknowledgement subject without
// allocating, unlike the client's Metadata, which the source would call for
// every message.
func parseAckSubject(reply string) (ackMeta, error) {
	rest, ok := strings.CutPrefix(reply, "$JS.ACK.")
	if !ok {
		return ackMeta{}, fmt.Errorf("%w: %q", ErrNotAckSubject, reply)
	}
	var pos [3]int
	switch n := strings.Count(rest, ".") + 1; {
	case n == 7:
		pos = ackShortPos
	case n >= 10:
		pos = ackLongPos
	default:
		return ackMeta{}, fmt.Errorf("%w: %q has %d tokens", ErrNotAckSubject, reply, n+2)
	}
	var nums [3]uint64
	for i, want := 0, 0; want < len(pos); i++ {
		tok, after, _ := strings.Cut(rest, ".")
		rest = after
		if i != pos[want] {
			continue
		}
		n, ok := parseDecimal(tok)
		if !ok {
			return ackMeta{}, fmt.Errorf("%w: %q: token %d is not a number", ErrNotAckSubject, reply, i+2)
		}
		nums[want] = n
		want++
	}
	if nums[1] > math.MaxInt64 {
		return ackMeta{}, fmt.Errorf("%w: %q: timestamp out of range", ErrNotAckSubject, reply)
	}
	return ackMeta{seq: nums[0], nanos: int64(nums[1]), pending: nums[2]}, nil
}

// parseDecimal reads a non-empty run of decimal digits that fits in a
// uint64.
func parseDecimal(s string) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(s); i++ {
		d := uint64(s[i] - '0')
		if d > 9 || n > (math.MaxUint64-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}
