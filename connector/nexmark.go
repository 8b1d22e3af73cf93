package connector

import "strconv"

// A simplified Nexmark stream: every block of nexmarkBlock events holds one
// person, then nexmarkAuctions auctions, then bids (the benchmark's 1:3:46
// proportion). Ids start at nexmarkFirstID; sellers, bidders and auctions
// are drawn from the nexmarkRecent most recent persons and auctions.
const (
	nexmarkBlock    = 50
	nexmarkAuctions = 3
	nexmarkFirstID  = 1000
	nexmarkRecent   = 100
)

func nexmarkValue(g *generator, dst []byte, n, ts int64) []byte {
	r := &g.rng
	block, off := n/nexmarkBlock, n%nexmarkBlock
	persons := block + 1 // persons so far, this block's included
	switch {
	case off == 0:
		return nexmarkPerson(dst, nexmarkFirstID+block, ts, r)
	case off <= nexmarkAuctions:
		id := nexmarkFirstID + block*nexmarkAuctions + off - 1
		return nexmarkAuction(dst, id, recent(persons, r), ts, r)
	default:
		auctions := persons * nexmarkAuctions
		return nexmarkBid(dst, recent(auctions, r), recent(persons, r), ts, r)
	}
}

// recent draws the id of one of the nexmarkRecent latest of count entities.
func recent(count int64, r *rng) int64 {
	return nexmarkFirstID + count - 1 - int64(r.intn(int(min(count, nexmarkRecent))))
}

func nexmarkPerson(dst []byte, id, ts int64, r *rng) []byte {
	first := firstNames[r.intn(len(firstNames))]
	last := lastNames[r.intn(len(lastNames))]
	dst = append(dst, `{"event_type":"person","id":`...)
	dst = strconv.AppendInt(dst, id, 10)
	dst = append(dst, `,"name":"`...)
	dst = append(dst, first...)
	dst = append(dst, ' ')
	dst = append(dst, last...)
	dst = append(dst, `","email":"`...)
	dst = append(dst, first...)
	dst = append(dst, '.')
	dst = strconv.AppendInt(dst, id, 10)
	dst = append(dst, `@example.com","city":"`...)
	c := r.intn(len(cities))
	dst = append(dst, cities[c].name...)
	dst = append(dst, `","state":"`...)
	dst = append(dst, cities[c].state...)
	dst = append(dst, '"')
	return appendTS(dst, ts)
}

func nexmarkAuction(dst []byte, id, seller, ts int64, r *rng) []byte {
	initial := int64(r.intn(10_000) + 1)
	dst = append(dst, `{"event_type":"auction","id":`...)
	dst = strconv.AppendInt(dst, id, 10)
	dst = append(dst, `,"item_name":"`...)
	dst = append(dst, vocabulary[r.intn(len(vocabulary))]...)
	dst = append(dst, ' ')
	dst = append(dst, items[r.intn(len(items))]...)
	dst = append(dst, `","initial_bid":`...)
	dst = strconv.AppendInt(dst, initial, 10)
	dst = append(dst, `,"reserve":`...)
	dst = strconv.AppendInt(dst, initial+int64(r.intn(10_000)), 10)
	dst = append(dst, `,"expires":`...)
	dst = strconv.AppendInt(dst, ts+int64(r.intn(60)+1)*1000, 10)
	dst = append(dst, `,"seller":`...)
	dst = strconv.AppendInt(dst, seller, 10)
	dst = append(dst, `,"category":`...)
	dst = strconv.AppendInt(dst, int64(10+r.intn(5)), 10)
	return appendTS(dst, ts)
}

func nexmarkBid(dst []byte, auction, bidder, ts int64, r *rng) []byte {
	dst = append(dst, `{"event_type":"bid","auction":`...)
	dst = strconv.AppendInt(dst, auction, 10)
	dst = append(dst, `,"bidder":`...)
	dst = strconv.AppendInt(dst, bidder, 10)
	dst = append(dst, `,"price":`...)
	dst = strconv.AppendInt(dst, int64(r.intn(100_000)+1), 10)
	dst = append(dst, `,"channel":"`...)
	dst = append(dst, channels[r.intn(len(channels))]...)
	dst = append(dst, '"')
	return appendTS(dst, ts)
}

var (
	firstNames = [...]string{"ada", "bruno", "chloe", "dmitri", "elena", "farid", "greta", "hiro", "ines", "jonas", "keiko", "lars"}
	lastNames  = [...]string{"abbott", "brandt", "castillo", "dumont", "eriksen", "fujita", "garcia", "holm", "ivanova", "jensen"}
	cities     = [...]struct{ name, state string }{
		{"portland", "or"}, {"salem", "or"}, {"boise", "id"}, {"tacoma", "wa"}, {"spokane", "wa"},
		{"fresno", "ca"}, {"oakland", "ca"}, {"tucson", "az"}, {"reno", "nv"}, {"laramie", "wy"},
	}
	items    = [...]string{"lamp", "clock", "vase", "chair", "rug", "mirror", "guitar", "camera", "bicycle", "kettle"}
	channels = [...]string{"web", "mobile", "partner", "email"}
)
