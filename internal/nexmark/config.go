// Package nexmark is the Nexmark benchmark's auction model: a generator of
// person, auction and bid events that follows the model of the benchmark's
// reference generators (nexmark/nexmark, derived from Apache Beam's), the
// events' JSON shape and types, and plain-Go reference implementations of
// queries 0, 1, 2, 3, 4, 5, 7, 8 and 11 that the platform's output can be
// compared with. docs/NEXMARK.md describes the model.
//
// Every event is a function of the seed, the configuration and its index
// alone, so that a source split into parts can produce any subset of the
// indexes, in any order, and still give the same events.
package nexmark

import "fmt"

// The model's fixed constants, as in the reference.
const (
	// FirstPersonID and FirstAuctionID are the ids of the first person
	// and auction; FirstCategoryID the first of NumCategories categories.
	FirstPersonID   = 1000
	FirstAuctionID  = 1000
	FirstCategoryID = 10
	NumCategories   = 5
	// personLead and auctionLead are the ids past the last person or
	// auction created that a random choice may name (an event "from the
	// future", as happens when events cross in flight).
	personLead  = 10
	auctionLead = 10
	// hotBatch is the size of the batches of people and auctions whose
	// first member is hot (the second, for bidders).
	hotBatch = 100
	// hotChannels is 1 over the share of bids from a hot channel;
	// channels the number of the other channels.
	hotChannels = 2
	channels    = 10_000
	// shuffle is the multiplier that permutes the event numbers of an
	// out-of-order group.
	shuffle = 953
	// maxAvgSize bounds the configured average event sizes.
	maxAvgSize = 1 << 14
)

// DefaultBaseTime is the event time of event number 0 unless the
// configuration says otherwise: 2023-11-14T22:13:20Z.
const DefaultBaseTime int64 = 1_700_000_000_000

// DefaultEventRate is the events per second of event time unless the
// configuration says otherwise: one event every 10 ms.
const DefaultEventRate = 100

// Config configures the generator. A zero field takes the default in its
// comment (the reference's default).
type Config struct {
	// Proportions of persons, auctions and bids: 1, 3 and 46. Each block
	// of their sum of events holds that many of each, in that order.
	PersonProportion, AuctionProportion, BidProportion int
	// Hot ratios: an auction is for a hot seller, and a bid by a hot
	// bidder, with probability 1 - 1/ratio (4 and 4); a bid is for a hot
	// auction with probability 1 - 1/HotAuctionsRatio (2).
	HotSellersRatio, HotBiddersRatio, HotAuctionsRatio int
	// ActivePeople is how many of the latest persons other than hot ones
	// sell and bid (1000); InFlightAuctions how many of the latest
	// auctions other than hot ones receive bids (100).
	ActivePeople, InFlightAuctions int
	// OutOfOrderGroup is the size of the groups of consecutive event
	// numbers that are emitted in a shuffled order (1: in order). It may
	// not be a multiple of 953.
	OutOfOrderGroup int
	// EventRate is events per second of event time (DefaultEventRate):
	// event number n happens at BaseTime + n*1000/EventRate ms.
	EventRate int
	// BaseTime is the event time of event number 0 in milliseconds since
	// the epoch (DefaultBaseTime).
	BaseTime int64
	// Count is the number of events when bounded (0: unbounded); a last
	// out-of-order group that Count cuts short is left in order.
	Count int64
	// Seed selects one of the streams the model describes.
	Seed int64
	// Average sizes in bytes that the extra field pads events to, as the
	// reference counts them: 200, 500 and 100. At most 16384.
	AvgPersonSize, AvgAuctionSize, AvgBidSize int
}

// WithDefaults returns c with its zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.PersonProportion, 1)
	def(&c.AuctionProportion, 3)
	def(&c.BidProportion, 46)
	def(&c.HotSellersRatio, 4)
	def(&c.HotBiddersRatio, 4)
	def(&c.HotAuctionsRatio, 2)
	def(&c.ActivePeople, 1000)
	def(&c.InFlightAuctions, 100)
	def(&c.OutOfOrderGroup, 1)
	def(&c.EventRate, DefaultEventRate)
	def(&c.AvgPersonSize, 200)
	def(&c.AvgAuctionSize, 500)
	def(&c.AvgBidSize, 100)
	if c.BaseTime == 0 {
		c.BaseTime = DefaultBaseTime
	}
	return c
}

// Validate reports the first field of c (with defaults applied) that is out
// of range.
func (c Config) Validate() error {
	ints := []struct {
		name string
		v    int
		max  int
	}{
		{"person proportion", c.PersonProportion, 1 << 20},
		{"auction proportion", c.AuctionProportion, 1 << 20},
		{"bid proportion", c.BidProportion, 1 << 20},
		{"hot sellers ratio", c.HotSellersRatio, 1 << 30},
		{"hot bidders ratio", c.HotBiddersRatio, 1 << 30},
		{"hot auctions ratio", c.HotAuctionsRatio, 1 << 30},
		{"active people", c.ActivePeople, 1 << 30},
		{"in-flight auctions", c.InFlightAuctions, 1 << 30},
		{"out-of-order group", c.OutOfOrderGroup, 1 << 30},
		{"event rate", c.EventRate, 1 << 30},
		{"average person size", c.AvgPersonSize, maxAvgSize},
		{"average auction size", c.AvgAuctionSize, maxAvgSize},
		{"average bid size", c.AvgBidSize, maxAvgSize},
	}
	for _, f := range ints {
		if f.v < 1 || f.v > f.max {
			return fmt.Errorf("nexmark: %s %d: want 1 to %d", f.name, f.v, f.max)
		}
	}
	if c.OutOfOrderGroup%shuffle == 0 {
		return fmt.Errorf("nexmark: out-of-order group %d: must not be a multiple of %d", c.OutOfOrderGroup, shuffle)
	}
	if c.Count < 0 || c.BaseTime < 0 {
		return fmt.Errorf("nexmark: count %d and base time %d must not be negative", c.Count, c.BaseTime)
	}
	return nil
}
