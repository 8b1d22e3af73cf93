package spec

// Trigger decides when a window fires, as Flink's Trigger: Type says which
// fields apply: event_time and processing_time {}, count {Count},
// continuous_event_time and continuous_processing_time {Interval}. Purge
// makes every firing a FIRE_AND_PURGE, which drops the window's contents
// after emitting them (Flink's PurgingTrigger); without it firings
// accumulate.
type Trigger struct {
	// Type is event_time | processing_time | count | continuous_event_time
	// | continuous_processing_time.
	Type     string   `json:"type" required:"true"`
	Count    int64    `json:"count,omitzero"`
	Interval Duration `json:"interval,omitzero"`
	Purge    bool     `json:"purge,omitzero"`
}

// Evictor removes records from a window when it fires, before its window
// function runs (Before, the default) or after it, as Flink's Evictor: Type
// says which fields apply: count {Max} keeps the last Max records; time
// {Size} keeps the records within Size of the window's latest timestamp;
// delta {Threshold, Field} keeps the records whose JSON number Field is
// less than Threshold from the last record's. It needs the window's
// records, so only process_window takes one.
type Evictor struct {
	Type      string   `json:"type" required:"true"` // count | time | delta
	Max       int64    `json:"max,omitzero"`
	Size      Duration `json:"size,omitzero"`
	Threshold float64  `json:"threshold,omitzero"`
	Field     string   `json:"field,omitempty"`
	Before    bool     `json:"before" default:"true"`
}
