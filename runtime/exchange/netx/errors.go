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
	// Sent, when not 0, is the last sequence number the sender said it
	// sent (its tail), Want and after never arrived: the channel's last
	// messages were lost.
	Sent uint64
}

func (e *SequenceError) Error() string {
	if e.Sent != 0 {
		return fmt.Sprintf("netx: channel %s: the sender sent messages up to %d, %d and after never arrived (lost)", e.Channel, e.Sent, e.Want)
	}
	what := "messages missing: lost, or reordered"
	if e.Got < e.Want {
		what = "a message repeated, or reordered"
	}
	return fmt.Sprintf("netx: channel %s: message %d arrived, want %d (%s)", e.Channel, e.Got, e.Want, what)
}
