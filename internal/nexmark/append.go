package nexmark

// Names and places persons are drawn from, as in the reference: few
// states, so that queries that filter on them find matches in small runs.
var (
	firstNames = [...]string{"Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate", "Julie", "Sarah", "Deiter", "Walter"}
	lastNames  = [...]string{"Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith", "Jones", "Noris"}
	cities     = [...]string{"Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland", "Bend", "Redmond", "Seattle", "Kent", "Cheyenne"}
	states     = [...]string{"AZ", "CA", "ID", "OR", "WA", "WY"}
)

// AppendEvent appends the JSON of the event at index i to dst and returns
// the extended slice. It allocates nothing when dst has room.
func (g *Generator) AppendEvent(dst []byte, i int64) []byte {
	e := g.EventNumber(i)
	ts := g.timeOf(e)
	r := newRNG(g.c.Seed, eventStream, e)
	// The event time is written twice, in the event and in its object.
	var digits [20]byte
	when := appendInt(digits[:0], ts)
	switch g.kindOf(e) {
	case KindPerson:
		dst = append(dst, `{"event_type":0,"person":`...)
		dst = g.appendPerson(dst, e, ts, when, &r)
		dst = append(dst, `,"auction":null,"bid":null`...)
	case KindAuction:
		dst = append(dst, `{"event_type":1,"person":null,"auction":`...)
		dst = g.appendAuction(dst, e, ts, when, &r)
		dst = append(dst, `,"bid":null`...)
	default:
		dst = append(dst, `{"event_type":2,"person":null,"auction":null,"bid":`...)
		dst = g.appendBid(dst, e, ts, when, &r)
	}
	dst = append(dst, `,"dateTime":`...)
	dst = append(dst, when...)
	return append(dst, '}')
}

func (g *Generator) appendPerson(dst []byte, e, ts int64, when []byte, r *rng) []byte {
	dst = append(dst, `{"id":`...)
	dst = appendInt(dst, g.lastPerson(e)+FirstPersonID)
	dst = append(dst, `,"name":"`...)
	size := len(dst)
	dst = append(dst, firstNames[r.intn(len(firstNames))]...)
	dst = append(dst, ' ')
	dst = append(dst, lastNames[r.intn(len(lastNames))]...)
	size = len(dst) - size
	dst = append(dst, `","emailAddress":"`...)
	mark := len(dst)
	dst = r.appendString(dst, 7, ' ')
	dst = append(dst, '@')
	dst = r.appendString(dst, 5, ' ')
	dst = append(dst, ".com"...)
	size += len(dst) - mark
	dst = append(dst, `","creditCard":"`...)
	for k := range 4 {
		if k > 0 {
			dst = append(dst, ' ')
		}
		dst = appendPadded(dst, r.intn(10_000))
	}
	city, state := cities[r.intn(len(cities))], states[r.intn(len(states))]
	size += 19 + len(city) + len(state)
	dst = append(dst, `","city":"`...)
	dst = append(dst, city...)
	dst = append(dst, `","state":"`...)
	dst = append(dst, state...)
	dst = append(dst, `","dateTime":`...)
	dst = append(dst, when...)
	dst = append(dst, `,"extra":"`...)
	dst = r.appendExtra(dst, 8+size, g.c.AvgPersonSize)
	return append(dst, `"}`...)
}

// appendPadded appends n, below 10000, as four digits.
func appendPadded(dst []byte, n int) []byte {
	return append(dst, byte('0'+n/1000), byte('0'+n/100%10), byte('0'+n/10%10), byte('0'+n%10))
}

func (g *Generator) appendAuction(dst []byte, e, ts int64, when []byte, r *rng) []byte {
	seller := g.seller(e, r) + FirstPersonID
	category := FirstCategoryID + r.intn(NumCategories)
	initial := r.price()
	expires := ts + g.auctionLength(e, r)
	dst = append(dst, `{"id":`...)
	dst = appendInt(dst, g.lastAuction(e)+FirstAuctionID)
	dst = append(dst, `,"itemName":"`...)
	mark := len(dst)
	dst = r.appendString(dst, 20, ' ')
	size := len(dst) - mark
	dst = append(dst, `","description":"`...)
	mark = len(dst)
	dst = r.appendString(dst, 100, ' ')
	size += len(dst) - mark
	dst = append(dst, `","initialBid":`...)
	dst = appendInt(dst, initial)
	dst = append(dst, `,"reserve":`...)
	dst = appendInt(dst, initial+r.price())
	dst = append(dst, `,"dateTime":`...)
	dst = append(dst, when...)
	dst = append(dst, `,"expires":`...)
	dst = appendInt(dst, expires)
	dst = append(dst, `,"seller":`...)
	dst = appendInt(dst, seller)
	dst = append(dst, `,"category":`...)
	dst = appendInt(dst, int64(category))
	dst = append(dst, `,"extra":"`...)
	dst = r.appendExtra(dst, 8+size+40, g.c.AvgAuctionSize)
	return append(dst, `"}`...)
}

func (g *Generator) appendBid(dst []byte, e, ts int64, when []byte, r *rng) []byte {
	auction := g.auction(e, r) + FirstAuctionID
	bidder := g.bidder(e, r) + FirstPersonID
	dst = append(dst, `{"auction":`...)
	dst = appendInt(dst, auction)
	dst = append(dst, `,"bidder":`...)
	dst = appendInt(dst, bidder)
	dst = append(dst, `,"price":`...)
	dst = appendInt(dst, r.price())
	dst = append(dst, ',')
	dst = r.appendChannel(dst, g.urls)
	dst = append(dst, `,"dateTime":`...)
	dst = append(dst, when...)
	dst = append(dst, `,"extra":"`...)
	dst = r.appendExtra(dst, 32, g.c.AvgBidSize)
	return append(dst, `"}`...)
}
