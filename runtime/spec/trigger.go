package spec

// Trigger decides when a window fires, as Flink's Trigger: Type says which
// fields apply: event_time and processing_time {}, count {Count},
// continuous_event_time and continuous_processing_time {Interval}, custom
// {Module, Function} (a function of kind trigger, Flink's Trigger written as
// a UDF). Purge makes every firing a FIRE_AND_PURGE, which drops the window's contents
// after emitting them (Flink's PurgingTrigger); without it firings
// accumulate.
type Trigger struct {
	// Type is event_time | processing_time | count | continuous_event_time
	// | continuous_processing_time | custom.
	Type     string   `json:"type" required:"true"`
	Count    int64    `json:"count,omitzero"`
	Interval Duration `json:"interval,omitzero"`
	Purge    bool     `json:"purge,omitzero"`
	// Module and Function name a custom trigger's function.
	Module   string `json:"module,omitempty"`
	Function string `json:"function,omitempty"`
}

// Evictor removes records from a window when it fires, before its window
// function runs (Before, the default) or after it, as Flink's Evictor: Type
// says which fields apply: count {Max} keeps the last Max records; time
// {Size} keeps the records within Size of the window's latest timestamp;
// delta {Threshold, Field} keeps the records whose JSON number Field is
// less than Threshold from the last record's; custom {Module, Function,
// When} is a UDF of kind evictor that says which records to keep, before
// the window function, after it or both (When; Before is the built-in
// evictors'). It needs the window's records, so only process_window takes
// one.
type Evictor struct {
	Type      string   `json:"type" required:"true"` // count | time | delta | custom
	Max       int64    `json:"max,omitzero"`
	Size      Duration `json:"size,omitzero"`
	Threshold float64  `json:"threshold,omitzero"`
	Field     string   `json:"field,omitempty"`
	Before    bool     `json:"before" default:"true"`
	Module    string   `json:"module,omitempty"`
	Function  string   `json:"function,omitempty"`
	When      string   `json:"when,omitempty"` // before (the default) | after | both
}
