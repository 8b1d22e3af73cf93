package exec

// RemoteCounts are one subtask's figures for one vertex, as a part sends
// them to its run's leader, so that the job's figures cover the subtasks
// of every worker.
type RemoteCounts struct {
	Vertex       string `json:"vertex"`
	Subtask      int    `json:"subtask"`
	In           int64  `json:"in,omitempty"`
	Out          int64  `json:"out,omitempty"`
	UDFErrors    int64  `json:"udf_errors,omitempty"`
	Skipped      int64  `json:"skipped,omitempty"`
	DeadLettered int64  `json:"dead_lettered,omitempty"`
	Late         int64  `json:"late,omitempty"`
	Gaps         int64  `json:"gaps,omitempty"`
	Watermark    int64  `json:"watermark"`
}

// subtaskKeys are the tasks' task and subtask pairs.
func subtaskKeys(tasks []*Task) map[SubtaskKey]bool {
	mine := make(map[SubtaskKey]bool, len(tasks))
	for _, t := range tasks {
		mine[SubtaskKey{t.name, t.subtask}] = true
	}
	return mine
}

// partCounts are the figures of every vertex of the tasks in mine (a
// part's, subtaskKeys).
func (j *Job) partCounts(mine map[SubtaskKey]bool) []RemoteCounts {
	var out []RemoteCounts
	for _, v := range j.Plan.Vertices {
		head := chainHead(v).ID
		for i, c := range j.Counters[v.ID] {
			if !mine[SubtaskKey{head, i}] {
				continue
			}
			out = append(out, RemoteCounts{
				Vertex: v.ID, Subtask: i, In: c.In.Load(), Out: c.Out.Load(),
				UDFErrors: c.UDFErrors.Load(), Skipped: c.Skipped.Load(), DeadLettered: c.DeadLettered.Load(),
				Late: c.Late.Load(), Gaps: c.Gaps.Load(), Watermark: c.Watermark.Load(),
			})
		}
	}
	return out
}

// storeCounts takes a part's figures into the leader's counters of those
// subtasks, which no task of the leader writes.
func (j *Job) storeCounts(counts []RemoteCounts) {
	for _, rc := range counts {
		cs := j.Counters[rc.Vertex]
		if rc.Subtask < 0 || rc.Subtask >= len(cs) {
			continue
		}
		c := cs[rc.Subtask]
		c.In.Store(rc.In)
		c.Out.Store(rc.Out)
		c.UDFErrors.Store(rc.UDFErrors)
		c.Skipped.Store(rc.Skipped)
		c.DeadLettered.Store(rc.DeadLettered)
		c.Late.Store(rc.Late)
		c.Gaps.Store(rc.Gaps)
		c.Watermark.Store(rc.Watermark)
	}
}
