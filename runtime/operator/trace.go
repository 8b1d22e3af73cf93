package operator

import "wasmstream.io/platform/abi"

// Tracer is a Stage that is told which input each record it is passed
// answers: platform udf test, which prints that next to each output. A
// record function or process operator whose next stage is a Tracer calls
// Answers before each of its Process calls on it; in jobs no stage is one,
// and the operators keep no trace.
type Tracer interface {
	Stage
	// Answers says that record i of the next Process call answers
	// *inputs[i]: a record of the batch the operator's Process was given
	// (a pointer into that batch), or a timer the operator fired, as a
	// record with the timer's key and timestamp. inputs is valid until that
	// Process call returns.
	Answers(inputs []*abi.Record)
}
