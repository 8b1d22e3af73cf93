package spec

// Operator is one transformation. Exactly one of Map, Filter, FlatMap,
// Extract, Aggregate, Reduce, ProcessWindow, Process, Join, BroadcastProcess and
// AsyncLookup is set; Kind names it.
type Operator struct {
	ID    string `json:"id" required:"true"`
	Input string `json:"input,omitempty"` // empty for a join
	// Parallelism defaults to the job's.
	Parallelism int    `json:"parallelism"`
	KeyBy       *KeyBy `json:"key_by,omitempty"`
	// Partition overrides how records reach this operator from its input
	// (forward | rebalance | broadcast); key_by partitions by key instead.
	Partition       string       `json:"partition,omitempty"`
	Map             *FunctionRef `json:"map,omitempty"`
	Filter          *FunctionRef `json:"filter,omitempty"`
	FlatMap         *FunctionRef `json:"flat_map,omitempty"`
	Extract         *Extract     `json:"extract,omitempty"`
	Window          *Window      `json:"window,omitempty"`
	WindowAll       *Window      `json:"window_all,omitempty"`
	Aggregate       *Aggregate   `json:"aggregate,omitempty"`
	Reduce          *FunctionRef `json:"reduce,omitempty"`
	ProcessWindow   *FunctionRef `json:"process_window,omitempty"`
	Process         *FunctionRef `json:"process,omitempty"`
	Join            *Join        `json:"join,omitempty"`
	AsyncLookup     *AsyncLookup `json:"async_lookup,omitempty"`
	AllowedLateness Duration     `json:"allowed_lateness,omitzero"`
	LateOutput      string       `json:"late_output,omitempty"` // a sink without input
	// SideOutputs names the side outputs the operator's function may write
	// (process, process_window, or a join's function or co_group), as
	// Flink's OutputTags; an input "id.name" reads one. A window operator
	// or a join also has the side output "late" (its late records),
	// without declaring it.
	SideOutputs []string `json:"side_outputs,omitempty"`
	// OnTimer names the on_timer function, in the module of process, that
	// handles the timers the process function registers.
	OnTimer string `json:"on_timer,omitempty"`
	// StateTTL overrides the TTL of states the operator's module declares.
	StateTTL []StateTTL `json:"state_ttl,omitempty"`

	// BroadcastProcess connects the input with a broadcast input
	// (broadcast_process.go).
	BroadcastProcess *BroadcastProcess `json:"broadcast_process,omitempty"`
}

// Extract replaces each record's value with a top-level member of its JSON
// object, as written, without a module; a record whose member is null
// produces nothing.
type Extract struct {
	Field string `json:"field" required:"true"`
}

// KeyBy selects the key: a JSON field of the value, or a key function.
type KeyBy struct {
	Field    string `json:"field,omitempty"`
	Module   string `json:"module,omitempty"`
	Function string `json:"function,omitempty"`
}

// Window assigns records to windows. Type says which fields apply:
// tumbling {Size, Offset}, sliding {Size, Slide, Offset},
// session {Gap or GapFunction}, count {Count, CountSlide}, global {} (one
// window per key, which only its Trigger fires).
type Window struct {
	Type   string   `json:"type" required:"true"` // tumbling | sliding | session | count | global
	Size   Duration `json:"size,omitzero"`
	Slide  Duration `json:"slide,omitzero"`
	Offset Duration `json:"offset,omitzero"`
	Gap    Duration `json:"gap,omitzero"`
	// GapFunction gives a dynamic session gap.
	GapFunction *FunctionRef `json:"gap_function,omitempty"`
	// Count is the records in a count window; CountSlide, when set, slides it.
	Count      int64 `json:"count,omitzero"`
	CountSlide int64 `json:"count_slide,omitzero"`
	// Trigger says when the window fires; nil: when the watermark (or,
	// with time: processing, the clock) passes its end. A global window
	// needs one.
	Trigger *Trigger `json:"trigger,omitempty"`
	// Evictor removes records from the window when it fires.
	Evictor *Evictor `json:"evictor,omitempty"`
}

// Aggregate is a built-in or UDF window aggregate.
type Aggregate struct {
	Builtin  string `json:"builtin,omitempty"` // count | sum | min | max | avg
	Field    string `json:"field,omitempty"`   // the JSON number field of sum, min, max, avg
	Module   string `json:"module,omitempty"`
	Function string `json:"function,omitempty"`
}

// JoinSide is one input of a join.
type JoinSide struct {
	Input string `json:"input" required:"true"`
	KeyBy KeyBy  `json:"key_by" required:"true"`
}

// Interval bounds an interval join relative to the left record's timestamp.
type Interval struct {
	Lower          Duration `json:"lower"`
	Upper          Duration `json:"upper"`
	LowerExclusive bool     `json:"lower_exclusive,omitzero"`
	UpperExclusive bool     `json:"upper_exclusive,omitzero"`
}

// Join joins two keyed inputs over a window or an interval. Without Function
// or CoGroup it emits the built-in pairs.
type Join struct {
	Left     JoinSide     `json:"left" required:"true"`
	Right    JoinSide     `json:"right" required:"true"`
	Window   *Window      `json:"window,omitempty"`
	Interval *Interval    `json:"interval,omitempty"`
	Function *FunctionRef `json:"function,omitempty"`
	CoGroup  *FunctionRef `json:"co_group,omitempty"`
}
