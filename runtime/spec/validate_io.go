package spec

import (
	"fmt"
	"slices"
)

// ids lists the valid ids of the vertices of the given kinds, in the order
// they are declared.
func (v *validator) ids(kinds ...string) []string {
	var out []string
	add := func(kind string, id string) {
		if x, ok := v.vertices[id]; ok && x.kind == kind && slices.Contains(kinds, kind) {
			out = append(out, id)
		}
	}
	for _, s := range v.job.Sources {
		add(KindSource, s.ID)
	}
	for _, o := range v.job.Operators {
		add(KindOperator, o.ID)
	}
	for _, s := range v.job.Sinks {
		add(KindSink, s.ID)
	}
	return out
}

// checkIDs checks every vertex id and indexes the first declaration of each,
// before any input is resolved.
func (v *validator) checkIDs() {
	j := v.job
	if len(j.Sources) == 0 {
		v.fail("sources", "at least one source is required")
	}
	if len(j.Sinks) == 0 {
		v.fail("sinks", "at least one sink is required")
	}
	id := func(kind string, index int, id string) {
		x := vertex{kind, index}
		path := x.path() + ".id"
		switch first, dup := v.vertices[id]; {
		case id == "":
			v.fail(path, "required")
		case !isIdentifier(id):
			v.fail(path, "want letters, digits, '-', '_' and '.', got %q", id)
		case dup:
			v.fail(path, "duplicate id %q, first at %s", id, first.path())
		default:
			v.vertices[id] = x
		}
	}
	for i := range j.Sources {
		id(KindSource, i, j.Sources[i].ID)
	}
	for i := range j.Operators {
		id(KindOperator, i, j.Operators[i].ID)
	}
	for i := range j.Sinks {
		id(KindSink, i, j.Sinks[i].ID)
	}
}

// input checks that id names a source or an operator.
func (v *validator) input(path, id string) {
	if id == "" {
		v.fail(path, "required")
		return
	}
	switch x, ok := v.vertices[id]; {
	case !ok && v.sideInput(path, id):
	case !ok:
		v.fail(path, "no source or operator has id %q%s", id, didYouMean(id, v.ids(KindSource, KindOperator)))
	case x.kind == KindSink:
		v.fail(path, "%q is a sink; an input is a source or an operator", id)
	default:
		v.ambiguous(path, id)
	}
}

func (v *validator) source(p string, s *Source) {
	v.parallelism(p+".parallelism", s.Parallelism)
	switch n := countSet(s.JetStream != nil, s.Generator != nil, s.KV != nil, s.NATS != nil, s.TestStream != nil); {
	case n > 1:
		v.fail(p, "set one of jetstream, generator, kv, nats or test_stream, not several")
	case n == 0:
		v.fail(p, "set jetstream, generator, kv, nats or test_stream")
	}
	if s.TestStream != nil {
		v.testStream(p, s) // teststream.go
	}
	v.connectorSource(p, s) // validate_connectors.go
	if js := s.JetStream; js != nil {
		if msg := streamProblem(js.Stream); msg != "" {
			v.fail(p+".jetstream.stream", "%s", msg)
		}
		for i, subj := range js.Subjects {
			if msg := subjectProblem(subj, true); msg != "" {
				v.fail(fmt.Sprintf("%s.jetstream.subjects[%d]", p, i), "%s", msg)
			}
		}
		v.oneOf(p+".jetstream.on_gap", js.OnGap, onGaps...)
	}
	if g := s.Generator; g != nil {
		v.oneOf(p+".generator.kind", g.Kind, generatorKinds...)
		if g.Rate < 0 {
			v.fail(p+".generator.rate", "must not be negative, got %d", g.Rate)
		}
		if g.Count < 0 {
			v.fail(p+".generator.count", "must not be negative, got %d", g.Count)
		}
		if g.Keys < 1 {
			v.fail(p+".generator.keys", "must be at least 1, got %d", g.Keys)
		}
		if g.Nexmark != nil {
			v.nexmarkModel(p+".generator.nexmark", g.Kind, g.Nexmark)
		}
	}
	if ts := s.Timestamp; ts != nil {
		switch {
		case ts.Field != "" && ts.Function != nil:
			v.fail(p+".timestamp", "set field or function, not both")
		case ts.Function != nil:
			v.functionRef(p+".timestamp.function", ts.Function)
		}
	}
	if s.Watermark != nil {
		v.watermark(p+".watermark", s.Watermark)
	}
}

func (v *validator) watermark(p string, w *Watermark) {
	v.oneOf(p+".strategy", w.Strategy, watermarkStrategies...)
	v.notNegative(p+".max_out_of_orderness", w.MaxOutOfOrderness)
	if w.MaxOutOfOrderness.Duration > 0 && w.Strategy != "bounded_out_of_orderness" {
		v.fail(p+".max_out_of_orderness", "only used by the bounded_out_of_orderness strategy")
	}
	v.notNegative(p+".idle_timeout", w.IdleTimeout)
	v.notNegative(p+".interval", w.Interval)
	switch {
	case w.Strategy == "punctuated" && w.Function == nil:
		v.fail(p+".function", "required by the punctuated strategy")
	case w.Strategy != "punctuated" && w.Function != nil:
		v.fail(p+".function", "only used by the punctuated strategy")
	case w.Function != nil:
		v.functionRef(p+".function", w.Function)
	}
}

// sinks checks the sinks, and that the sinks without input and the
// operators' late outputs name each other.
func (v *validator) sinks() {
	named := map[string]bool{}
	for _, op := range v.job.Operators {
		named[op.LateOutput] = true
	}
	for i := range v.job.Sinks {
		s := &v.job.Sinks[i]
		p := fmt.Sprintf("sinks[%d]", i)
		v.parallelism(p+".parallelism", s.Parallelism)
		switch {
		case s.Input != "":
			v.input(p+".input", s.Input)
		case s.ID != "" && !named[s.ID]:
			v.fail(p+".input", "required unless an operator's late_output names this sink")
		}
		if s.Partition != "" {
			v.partition(p+".partition", s.Partition, s.Input, s.Parallelism)
		}
		switch n := countSet(s.JetStream != nil, s.Discard, s.Print != nil, s.KV != nil, s.NATS != nil, s.ObjectStore != nil); {
		case n > 1:
			v.fail(p, "set one of jetstream, kv, nats, object_store, print or discard, not several")
		case n == 0:
			v.fail(p, "set jetstream, kv, nats, object_store, print or discard")
		}
		v.connectorSink(p, s) // validate_connectors.go
		if pr := s.Print; pr != nil {
			v.oneOf(p+".print.format", pr.Format, printFormats...)
			if pr.Keep < 0 || pr.Keep > MaxPrintKeep {
				v.fail(p+".print.keep", "must be between 0 and %d, got %d", MaxPrintKeep, pr.Keep)
			}
		}
		if s.Throttle < 0 {
			v.fail(p+".throttle", "must not be negative, got %d", s.Throttle)
		}
		if js := s.JetStream; js != nil {
			if msg := subjectProblem(js.Subject, false); msg != "" {
				v.fail(p+".jetstream.subject", "%s", msg)
			}
			if js.MaxInFlight < 1 {
				v.fail(p+".jetstream.max_in_flight", "must be at least 1, got %d", js.MaxInFlight)
			}
		}
	}
}

// lateOutput checks that an operator's late_output names a sink without input.
func (v *validator) lateOutput(path, id string) {
	switch x, ok := v.vertices[id]; {
	case !ok:
		v.fail(path, "no sink has id %q%s", id, didYouMean(id, v.ids(KindSink)))
	case x.kind != KindSink:
		v.fail(path, "%q is not a sink", id)
	case v.job.Sinks[x.index].Input != "":
		v.fail(path, "sink %q has an input; a late_output sink has none", id)
	}
}

// nexmarkModel checks a generator's nexmark block: only with the nexmark
// kind, and no field negative (zero is the model's default).
func (v *validator) nexmarkModel(p, kind string, m *NexmarkModel) {
	if kind != "nexmark" {
		v.fail(p, "only with kind nexmark, not %q", kind)
		return
	}
	fields := []struct {
		name string
		v    int
	}{
		{"event_rate", m.EventRate}, {"person_proportion", m.PersonProportion},
		{"auction_proportion", m.AuctionProportion}, {"bid_proportion", m.BidProportion},
		{"hot_sellers_ratio", m.HotSellersRatio}, {"hot_bidders_ratio", m.HotBiddersRatio},
		{"hot_auctions_ratio", m.HotAuctionsRatio}, {"active_people", m.ActivePeople},
		{"in_flight_auctions", m.InFlightAuctions}, {"out_of_order_group", m.OutOfOrderGroup},
	}
	for _, f := range fields {
		if f.v < 0 || f.v > 1<<20 {
			v.fail(p+"."+f.name, "must be 0 (the default) to %d, got %d", 1<<20, f.v)
		}
	}
	if m.OutOfOrderGroup > 0 && m.OutOfOrderGroup%953 == 0 {
		v.fail(p+".out_of_order_group", "must not be a multiple of 953, got %d", m.OutOfOrderGroup)
	}
}

// MaxPrintKeep bounds the records a print sink's subtask keeps.
const MaxPrintKeep = 10000

// countSet is how many of set are true.
func countSet(set ...bool) int {
	n := 0
	for _, b := range set {
		if b {
			n++
		}
	}
	return n
}
