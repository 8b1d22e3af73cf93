package spec

import "reflect"

// The fixed values of the spec's string fields. The validator accepts only
// these, and JSONSchema writes them as the fields' enums (see enums).
var (
	timeModes           = []string{"event", "processing", "ingestion"}
	onUDFErrors         = []string{"fail", "skip", "dead_letter", "quarantine"}
	placements          = []string{"local", "spread"}
	stateBackends       = []string{"memory", "pebble"}
	checkpointModes     = []string{"exactly_once", "at_least_once"}
	restartStrategies   = []string{"none", "fixed_delay", "exponential", "failure_rate"}
	generatorKinds      = []string{"sequence", "clicks", "text", "nexmark"}
	onGaps              = []string{"fail", "skip"}
	objectFormats       = []string{"jsonl"}
	watermarkStrategies = []string{"bounded_out_of_orderness", "monotonous", "none", "punctuated"}
	partitions          = []string{"forward", "rebalance", "broadcast"}
	printFormats        = []string{"text", "json"}
	windowTypes         = []string{"tumbling", "sliding", "session", "count", "global"}
	triggerTypes        = []string{"event_time", "processing_time", "count", "continuous_event_time", "continuous_processing_time", "custom"}
	evictorTypes        = []string{"count", "time", "delta", "custom"}
	evictorWhens        = []string{"before", "after", "both"}
	builtinAggregates   = append([]string{"count"}, fieldAggregates...)
	ttlUpdateTypes      = []string{"on_create_and_write", "on_read_and_write"}
	ttlVisibilities     = []string{"never_return_expired", "return_expired_if_not_cleaned_up"}
)

// enums maps a spec type and the json name of one of its fields to the
// values the field takes.
var enums = map[reflect.Type]map[string][]string{
	reflect.TypeFor[Job]():          {"time": timeModes, "placement": placements},
	reflect.TypeFor[OnUDFError]():   {"policy": onUDFErrors},
	reflect.TypeFor[StateBackend](): {"backend": stateBackends},
	reflect.TypeFor[Checkpoint]():   {"mode": checkpointModes},
	reflect.TypeFor[Restart]():      {"strategy": restartStrategies},
	reflect.TypeFor[Generator]():    {"kind": generatorKinds},
	reflect.TypeFor[JSSource]():     {"on_gap": onGaps},
	reflect.TypeFor[ObjectSink]():   {"format": objectFormats},
	reflect.TypeFor[Watermark]():    {"strategy": watermarkStrategies},
	reflect.TypeFor[Operator]():     {"partition": partitions},
	reflect.TypeFor[Sink]():         {"partition": partitions},
	reflect.TypeFor[Window]():       {"type": windowTypes},
	reflect.TypeFor[Trigger]():      {"type": triggerTypes},
	reflect.TypeFor[Evictor]():      {"type": evictorTypes, "when": evictorWhens},
	reflect.TypeFor[PrintSink]():    {"format": printFormats},
	reflect.TypeFor[Aggregate]():    {"builtin": builtinAggregates},
	reflect.TypeFor[StateTTL]():     {"update_type": ttlUpdateTypes, "visibility": ttlVisibilities},
}
