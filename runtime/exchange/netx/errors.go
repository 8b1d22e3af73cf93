package netx

import "fmt"

// SequenceError is the failure of a channel whose messages did not arrive
// one after the other: a gap (messages lost, Got > Want) or a reordering or
// duplicate (Got < Want). It fails the receiving gate, and so the task,
// which fails the job to its latest checkpoint.
type SequenceError struct {
	Channel Address
	// Want is the sequence number expected, Got the one that arrived.
	Want, Got uint64
}

func (e *SequenceError) Error() string {
	what := "messages missing: lost, or reordered"
	if e.Got < e.Want {
		what = "a message repeated, or reordered"
	}
	return fmt.Sprintf("netx: channel %s: message %d arrived, want %d (%s)", e.Channel, e.Got, e.Want, what)
}
