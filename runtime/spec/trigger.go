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
