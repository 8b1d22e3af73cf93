package exec

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"wasmstream.io/platform/checkpoint"
)

// Placement is where one run of a job runs, in cluster mode: the worker of
// each subtask. The job's leader, which holds its lease and runs its
// checkpoint coordinator, makes it as the run starts (Job.Place); every
// other worker with subtasks in it runs them with Job.RunPart.
type Placement struct {
	// Run is unique to the run, and grows from run to run: it names the
	// run's network channels and its control subjects.
	Run uint64
	// Self is this worker, Leader the job's.
	Self, Leader string
	// Tasks maps each subtask, "<chain head>[<index>]", to its worker; a
	// subtask missing runs on the leader.
	Tasks map[string]string
	// RestoreJob and Restore name the checkpoint the run restores, 0 for
	// none: every worker restores the one the leader chose.
	RestoreJob string
	Restore    int64
	// Alive says whether a worker still heartbeats; a run whose subtasks'
	// worker is gone fails, to restart on the live ones.
	Alive func(worker string) bool
}

// worker is the worker that runs subtask i of the chain headed by vertex.
func (p *Placement) worker(vertex string, i int) string {
	if w, ok := p.Tasks[vertex+"["+strconv.Itoa(i)+"]"]; ok {
		return w
	}
	return p.Leader
}

// here says whether subtask i of vertex runs on this worker.
func (p *Placement) here(vertex string, i int) bool { return p.worker(vertex, i) == p.Self }

// spans says whether the run has subtasks on other workers than this one.
func (p *Placement) spans() bool {
	for _, w := range p.Tasks {
		if w != p.Self {
			return true
		}
	}
	return false
}

// subjects are the run's control subjects: ctl carries the leader's
// triggers and notifications to the other workers, up their reports
// (acknowledgements, declines, ends, failures) to the leader.
func (p *Placement) subjects(job string) (ctl, up string) {
	base := "_platform.run." + job + "." + strconv.FormatUint(p.Run, 10)
	return base + ".ctl", base + ".up"
}

// Placer places a run's subtasks: called by the leader as each run starts,
// with the checkpoint the run restores (restoreJob "" and restore 0 for
// none) and every subtask's name. A nil Placement runs every subtask here.
type Placer func(ctx context.Context, restoreJob string, restore int64, tasks []string) (*Placement, error)

// Control messages between a run's workers, JSON on the run's subjects:
// few (a handful per checkpoint), so readable rather than small.
const (
	opTrigger  = "trigger"
	opNotify   = "notify"
	opStop     = "stop"
	opJoin     = "join"
	opPressure = "pressure"
	opAck      = "ack"
	opDecline  = "decline"
	opFinished = "finished"
	opRequest  = "request"
	opDone     = "done"
	opFailed   = "failed"
)

// runMsg is one control message.
type runMsg struct {
	Op string `json:"op"`
	// Worker sent it (reports).
	Worker string `json:"worker,omitempty"`
	// Barrier of a trigger.
	Barrier *checkpoint.Barrier `json:"barrier,omitempty"`
	// ID and Completed of a notification, an ack or a decline.
	ID        int64 `json:"id,omitempty"`
	Completed bool  `json:"completed,omitempty"`
	// Task acknowledging, declining, finished, done or failed.
	Task      string                     `json:"task,omitempty"`
	Blobs     map[string]checkpoint.Blob `json:"blobs,omitempty"`
	Alignment time.Duration              `json:"alignment,omitempty"`
	InFlight  int64                      `json:"in_flight,omitempty"`
	Reason    checkpoint.FailureReason   `json:"reason,omitempty"`
	Err       string                     `json:"error,omitempty"`
	Final     map[string][]byte          `json:"final,omitempty"`
	// Tasks done, of a done report.
	Tasks []string `json:"tasks,omitempty"`
	// Pressure are a worker's backpressure samples of its subtasks, and
	// Counts their figures (with a done report too, the final ones).
	Pressure []RemoteSample `json:"pressure,omitempty"`
	Counts   []RemoteCounts `json:"counts,omitempty"`
}

// decodeRunMsg reads a control message.
func decodeRunMsg(data []byte) (runMsg, error) {
	var m runMsg
	if err := json.Unmarshal(data, &m); err != nil {
		return m, fmt.Errorf("run control message: %w", err)
	}
	if m.Op == "" {
		return m, fmt.Errorf("run control message: no op")
	}
	return m, nil
}
