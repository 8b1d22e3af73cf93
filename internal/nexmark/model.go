package nexmark

// Kind is the type of an event, as the JSON's event_type numbers it.
type Kind int

// The event kinds.
const (
	KindPerson  Kind = 0
	KindAuction Kind = 1
	KindBid     Kind = 2
)

// Generator derives the events of one configuration. It holds no state
// beyond the configuration: every method is a pure function of the index
// it is given, and a Generator may be shared.
type Generator struct {
	c     Config
	total int64 // the sum of the proportions
	// futureEvents is how many events pass until InFlightAuctions more
	// auctions have been created: the horizon of an auction's length.
	futureEvents int64
	// urls are the channels' URLs.
	urls *channelURLs
}

// New returns the generator of cfg, with defaults for its zero fields.
func New(cfg Config) (*Generator, error) {
	c := cfg.WithDefaults()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	total := int64(c.PersonProportion + c.AuctionProportion + c.BidProportion)
	return &Generator{
		c:            c,
		total:        total,
		futureEvents: int64(c.InFlightAuctions) * total / int64(c.AuctionProportion),
		urls:         newChannelURLs(c.Seed),
	}, nil
}

// Config is the generator's configuration, defaults filled in.
func (g *Generator) Config() Config { return g.c }

// EventNumber is the number of the event emitted at index i: i itself, or
// with out-of-order groups a permutation of i within its group. The
// permutation is the reference's, offset times 953 modulo the group size,
// then reversed: alone it is the identity for the sizes that divide 952
// (2, 4, 7, 8, ...).
func (g *Generator) EventNumber(i int64) int64 {
	n := int64(g.c.OutOfOrderGroup)
	if n == 1 {
		return i
	}
	base := i / n * n
	if g.c.Count > 0 && base+n > g.c.Count {
		return i // a group the end cuts short stays in order
	}
	return base + n - 1 - (i-base)*shuffle%n
}

// Timestamp is the event time, in milliseconds, of the event at index i.
func (g *Generator) Timestamp(i int64) int64 { return g.timeOf(g.EventNumber(i)) }

// timeOf is the event time of event number e.
func (g *Generator) timeOf(e int64) int64 {
	return g.c.BaseTime + e*1000/int64(g.c.EventRate)
}

// Kind is the kind of the event at index i.
func (g *Generator) Kind(i int64) Kind { return g.kindOf(g.EventNumber(i)) }

func (g *Generator) kindOf(e int64) Kind {
	switch rem := e % g.total; {
	case rem < int64(g.c.PersonProportion):
		return KindPerson
	case rem < int64(g.c.PersonProportion+g.c.AuctionProportion):
		return KindAuction
	default:
		return KindBid
	}
}

// lastPerson is the base-0 id of the latest person created at or before
// event number e: e's own for a person event.
func (g *Generator) lastPerson(e int64) int64 {
	p := int64(g.c.PersonProportion)
	epoch, off := e/g.total, e%g.total
	if off >= p {
		off = p - 1
	}
	return epoch*p + off
}

// lastAuction is the base-0 id of the latest auction created at or before
// event number e: e's own for an auction event, -1 before the first.
func (g *Generator) lastAuction(e int64) int64 {
	p, a := int64(g.c.PersonProportion), int64(g.c.AuctionProportion)
	epoch, off := e/g.total, e%g.total
	switch {
	case off < p:
		epoch, off = epoch-1, a-1
	case off >= p+a:
		off = a - 1
	default:
		off -= p
	}
	return epoch*a + off
}

// randomPerson is a base-0 person id drawn uniformly from the ActivePeople
// latest persons and personLead ids ahead of them.
func (g *Generator) randomPerson(e int64, r *rng) int64 {
	people := g.lastPerson(e) + 1
	active := min(people, int64(g.c.ActivePeople))
	return people - active + r.int63n(active+personLead)
}

// randomAuction is a base-0 auction id drawn uniformly from the
// InFlightAuctions before the latest auction, that one, and auctionLead
// ids ahead.
func (g *Generator) randomAuction(e int64, r *rng) int64 {
	last := g.lastAuction(e)
	first := max(last-int64(g.c.InFlightAuctions), 0)
	return first + r.int63n(last-first+1+auctionLead)
}

// seller is the base-0 seller of the auction of event number e.
func (g *Generator) seller(e int64, r *rng) int64 {
	if r.intn(g.c.HotSellersRatio) > 0 {
		return g.lastPerson(e) / hotBatch * hotBatch
	}
	return g.randomPerson(e, r)
}

// bidder is the base-0 bidder of the bid of event number e: the second of
// a hot batch, so that hot bidders are not hot sellers.
func (g *Generator) bidder(e int64, r *rng) int64 {
	if r.intn(g.c.HotBiddersRatio) > 0 {
		return g.lastPerson(e)/hotBatch*hotBatch + 1
	}
	return g.randomPerson(e, r)
}

// auction is the base-0 auction the bid of event number e is for.
func (g *Generator) auction(e int64, r *rng) int64 {
	if r.intn(g.c.HotAuctionsRatio) > 0 {
		return g.lastAuction(e) / hotBatch * hotBatch
	}
	return g.randomAuction(e, r)
}

// auctionLength is a duration in ms drawn uniformly from 1 to twice the
// time until InFlightAuctions more auctions are created, so that about
// that many are open at once.
func (g *Generator) auctionLength(e int64, r *rng) int64 {
	horizon := g.timeOf(e+g.futureEvents) - g.timeOf(e)
	return 1 + r.int63n(max(2*horizon, 1))
}
