package netx

import (
	"fmt"
	"strconv"
	"strings"
)

// subjectPrefix starts every subject of the network exchange.
const subjectPrefix = "_platform.x."

// Address names one channel of an edge between processes: the channel from
// producer subtask From to consumer subtask To.
type Address struct {
	// Job is the job's id and Run the number of its run: a restarted run
	// uses new subjects, so it never hears what an earlier run still had
	// in flight.
	Job string
	Run uint64
	// Edge names the edge within the job.
	Edge string
	// From and To are the producer's and the consumer's subtask indexes.
	From, To int
}

// Subject is the channel's data subject, on which the sender publishes
// its buffers: _platform.x.<job>.<run>.<edge>.<from>.<to>.
func (a Address) Subject() string {
	return subjectPrefix + a.Job + "." + strconv.FormatUint(a.Run, 10) + "." + a.Edge + "." + strconv.Itoa(a.From) + "." + strconv.Itoa(a.To)
}

// Control is the channel's control subject, on which the receiver
// announces credits and released buffers: the data subject and ".ctl".
func (a Address) Control() string { return a.Subject() + ".ctl" }

// String names the channel in errors and logs.
func (a Address) String() string {
	return fmt.Sprintf("%s/%d/%s %d->%d", a.Job, a.Run, a.Edge, a.From, a.To)
}

// validate checks that a's names are single subject tokens.
func (a Address) validate() error {
	for _, f := range []struct{ name, v string }{{"Job", a.Job}, {"Edge", a.Edge}} {
		if f.v == "" || strings.ContainsAny(f.v, ".*> \t\r\n") {
			return fmt.Errorf("netx: address %s: %s %q is not one subject token", a, f.name, f.v)
		}
	}
	if a.From < 0 || a.To < 0 {
		return fmt.Errorf("netx: address %s: negative subtask index", a)
	}
	return nil
}
