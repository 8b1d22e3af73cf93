package spec

// Source is one input of the job. Exactly one of JetStream, Generator, KV,
// NATS and TestStream is set.
type Source struct {
	ID string `json:"id" required:"true"`
	// Parallelism defaults to the job's.
	Parallelism int         `json:"parallelism"`
	JetStream   *JSSource   `json:"jetstream,omitempty"`
	Generator   *Generator  `json:"generator,omitempty"`
	KV          *KVSource   `json:"kv,omitempty"`
	NATS        *NATSSource `json:"nats,omitempty"`
	TestStream  *TestStream `json:"test_stream,omitempty"`
	Timestamp   *Timestamp  `json:"timestamp,omitempty"`
	Watermark   *Watermark  `json:"watermark,omitempty"`
}

// Splits is the number of splits the source's input comes in, each read by
// one subtask: a JetStream source's subject filters (one for the whole
// stream), one for a KV bucket; 0 when any number of subtasks share the
// input (a generator splits its index space, core NATS subscriptions form a
// queue group).
func (s *Source) Splits() int {
	switch {
	case s.JetStream != nil:
		return max(len(s.JetStream.Subjects), 1)
	case s.KV != nil:
		return 1
	}
	return 0
}

// JSSource reads a JetStream stream.
type JSSource struct {
	Stream string `json:"stream" required:"true"`
	// Subjects filter the stream; none: every subject.
	Subjects []string `json:"subjects,omitempty"`
	// Bounded ends the source at the last sequence present when the job starts.
	Bounded bool `json:"bounded,omitzero"`
	// OnGap is what a sequence gap does: messages the source had not read
	// were removed from the stream. fail | skip (count it and go on).
	OnGap string `json:"on_gap" default:"fail"`
}

// Generator produces records without NATS.
type Generator struct {
	Kind  string `json:"kind" required:"true"` // sequence | clicks | text | nexmark
	Rate  int    `json:"rate,omitzero"`        // records per second; 0: as fast as possible
	Count int64  `json:"count,omitzero"`       // 0: unbounded
	Keys  int    `json:"keys" default:"1000"`  // distinct keys
	// Seed selects the records: the same seed gives the same records.
	Seed int64 `json:"seed,omitzero"`
	// Nexmark configures the nexmark kind's model; only with it.
	Nexmark *NexmarkModel `json:"nexmark,omitempty"`
}

// NexmarkModel sets the parameters of the Nexmark model (docs/NEXMARK.md).
// A zero field takes the model's default, in its comment.
type NexmarkModel struct {
	EventRate         int `json:"event_rate,omitzero"`         // events per second of event time; the source's rate, or 100 without one
	PersonProportion  int `json:"person_proportion,omitzero"`  // 1
	AuctionProportion int `json:"auction_proportion,omitzero"` // 3
	BidProportion     int `json:"bid_proportion,omitzero"`     // 46
	HotSellersRatio   int `json:"hot_sellers_ratio,omitzero"`  // 4
	HotBiddersRatio   int `json:"hot_bidders_ratio,omitzero"`  // 4
	HotAuctionsRatio  int `json:"hot_auctions_ratio,omitzero"` // 2
	ActivePeople      int `json:"active_people,omitzero"`      // 1000
	InFlightAuctions  int `json:"in_flight_auctions,omitzero"` // 100
	OutOfOrderGroup   int `json:"out_of_order_group,omitzero"` // 1: in order
}

// Timestamp says where a record's event time comes from: a JSON field, a
// function, or (neither set) the message's stored time.
type Timestamp struct {
	Field    string       `json:"field,omitempty"` // milliseconds since the epoch
	Function *FunctionRef `json:"function,omitempty"`
}

// Watermark is a source's watermark strategy.
type Watermark struct {
	Strategy          string   `json:"strategy" required:"true"` // bounded_out_of_orderness | monotonous | none | punctuated
	MaxOutOfOrderness Duration `json:"max_out_of_orderness,omitzero"`
	IdleTimeout       Duration `json:"idle_timeout,omitzero"` // 0: never idle
	// Interval is the period of watermark emission in processing time;
	// 0 emits one after every record.
	Interval Duration `json:"interval" default:"200ms"`
	// Function extracts punctuated watermarks.
	Function *FunctionRef `json:"function,omitempty"`
}
