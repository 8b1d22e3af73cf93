package nexmark

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// errSlowPath is what the fast parser returns for input it does not read:
// Parse then falls back to Decode.
var errSlowPath = errors.New("nexmark: not the generator's plain JSON")

// Parse reads an event from its JSON, as Decode does, several times faster
// for the generator's JSON (members without escapes or spaces between
// tokens); other JSON goes through Decode. It gives the same event and the
// same errors as Decode.
func Parse(data []byte) (Event, error) {
	// One copy of the JSON holds every string of the event.
	p := parser{b: data, s: string(data)}
	e, err := p.event()
	if err != nil || p.i != len(data) {
		return Decode(data)
	}
	return e, nil
}

// Events returns the events 0 to cfg.Count-1 of cfg's generator, in order:
// the events of a bounded generator source with that configuration.
func Events(cfg Config) ([]Event, error) {
	g, err := New(cfg)
	if err != nil {
		return nil, err
	}
	c := g.Config()
	if c.Count < 1 {
		return nil, fmt.Errorf("nexmark: events of an unbounded generator (count %d)", c.Count)
	}
	events := make([]Event, 0, c.Count)
	var buf []byte
	for i := range c.Count {
		buf = g.AppendEvent(buf[:0], i)
		e, err := Parse(buf)
		if err != nil {
			return nil, fmt.Errorf("event %d: %w", i, err)
		}
		events = append(events, e)
	}
	return events, nil
}

// parser reads the generator's JSON: objects whose members are strings
// without escapes, integers and null, with no space between tokens.
type parser struct {
	b []byte
	s string // b, which the event's strings are parts of
	i int
}

func (p *parser) event() (Event, error) {
	var e Event
	err := p.object(func(name string) error {
		switch name {
		case "event_type":
			n, err := p.int()
			e.Type = Kind(n)
			return err
		case "person":
			if p.null() {
				return nil
			}
			e.Person = new(Person)
			return p.person(e.Person)
		case "auction":
			if p.null() {
				return nil
			}
			e.Auction = new(Auction)
			return p.auction(e.Auction)
		case "bid":
			if p.null() {
				return nil
			}
			e.Bid = new(Bid)
			return p.bid(e.Bid)
		case "dateTime":
			var err error
			e.DateTime, err = p.int()
			return err
		}
		return errSlowPath
	})
	if err != nil {
		return Event{}, err
	}
	// Decode's checks, without its messages: Parse falls back to it.
	switch {
	case e.Type == KindPerson && e.Person != nil && e.Auction == nil && e.Bid == nil && e.DateTime == e.Person.DateTime,
		e.Type == KindAuction && e.Auction != nil && e.Person == nil && e.Bid == nil && e.DateTime == e.Auction.DateTime,
		e.Type == KindBid && e.Bid != nil && e.Person == nil && e.Auction == nil && e.DateTime == e.Bid.DateTime:
		return e, nil
	}
	return Event{}, errSlowPath
}

func (p *parser) person(x *Person) error {
	return p.object(func(name string) (err error) {
		switch name {
		case "id":
			x.ID, err = p.int()
		case "name":
			x.Name, err = p.string()
		case "emailAddress":
			x.EmailAddress, err = p.string()
		case "creditCard":
			x.CreditCard, err = p.string()
		case "city":
			x.City, err = p.string()
		case "state":
			x.State, err = p.string()
		case "dateTime":
			x.DateTime, err = p.int()
		case "extra":
			x.Extra, err = p.string()
		default:
			err = errSlowPath
		}
		return err
	})
}

func (p *parser) auction(x *Auction) error {
	return p.object(func(name string) (err error) {
		switch name {
		case "id":
			x.ID, err = p.int()
		case "itemName":
			x.ItemName, err = p.string()
		case "description":
			x.Description, err = p.string()
		case "initialBid":
			x.InitialBid, err = p.int()
		case "reserve":
			x.Reserve, err = p.int()
		case "dateTime":
			x.DateTime, err = p.int()
		case "expires":
			x.Expires, err = p.int()
		case "seller":
			x.Seller, err = p.int()
		case "category":
			x.Category, err = p.int()
		case "extra":
			x.Extra, err = p.string()
		default:
			err = errSlowPath
		}
		return err
	})
}

func (p *parser) bid(x *Bid) error {
	return p.object(func(name string) (err error) {
		switch name {
		case "auction":
			x.Auction, err = p.int()
		case "bidder":
			x.Bidder, err = p.int()
		case "price":
			x.Price, err = p.int()
		case "channel":
			x.Channel, err = p.string()
		case "url":
			x.URL, err = p.string()
		case "dateTime":
			x.DateTime, err = p.int()
		case "extra":
			x.Extra, err = p.string()
		default:
			err = errSlowPath
		}
		return err
	})
}

// object reads an object, calling member for each member's name with the
// parser at its value, which member reads. A name twice is left to Decode.
func (p *parser) object(member func(name string) error) error {
	if !p.byte('{') {
		return errSlowPath
	}
	if p.byte('}') {
		return nil
	}
	var seen [16]string
	for n := 0; ; n++ {
		name, err := p.string()
		if err != nil || !p.byte(':') {
			return errSlowPath
		}
		if n == len(seen) {
			return errSlowPath
		}
		for _, s := range seen[:n] {
			if s == name {
				return errSlowPath
			}
		}
		if err := member(name); err != nil {
			return err
		}
		seen[n] = name
		if p.byte('}') {
			return nil
		}
		if !p.byte(',') {
			return errSlowPath
		}
	}
}

func (p *parser) byte(c byte) bool {
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *parser) null() bool {
	if len(p.b)-p.i >= 4 && string(p.b[p.i:p.i+4]) == "null" {
		p.i += 4
		return true
	}
	return false
}

// string reads a string without escapes or control characters (ASCII
// only) and returns its contents, a part of p.s.
func (p *parser) string() (string, error) {
	if !p.byte('"') {
		return "", errSlowPath
	}
	start := p.i
	for p.i+8 <= len(p.b) && !special(binary.LittleEndian.Uint64(p.b[p.i:])) {
		p.i += 8
	}
	for ; p.i < len(p.b); p.i++ {
		switch c := p.b[p.i]; {
		case c == '"':
			p.i++
			return p.s[start : p.i-1], nil
		case c == '\\' || c < 0x20 || c >= 0x80:
			return "", errSlowPath
		}
	}
	return "", errSlowPath
}

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// special reports whether one of the eight bytes of x may be a quote, a
// backslash, a control character or not ASCII: never false when one is.
func special(x uint64) bool {
	q, b := x^('"'*ones), x^('\\'*ones)
	return ((x-0x20*ones)|(q-ones)&^q|(b-ones)&^b|x)&highs != 0
}

// int reads an integer without fraction or exponent, of at most 18
// digits (longer ones are left to Decode).
func (p *parser) int() (int64, error) {
	neg := p.byte('-')
	digits := p.i
	var n int64
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		n = n*10 + int64(p.b[p.i]-'0')
		p.i++
	}
	if d := p.i - digits; d == 0 || d > 18 || d > 1 && p.b[digits] == '0' {
		return 0, errSlowPath
	}
	if neg {
		n = -n
	}
	return n, nil
}
