package runtime

// String names the shipping as the API does.
func (s shipping) String() string {
	switch s {
	case shipHash:
		return "hash"
	case shipRebalance:
		return "rebalance"
	case shipBroadcast:
		return "broadcast"
	}
	return "forward"
}

// edgeInfos describes the edges out of v.
func edgeInfos(v *vertex) []EdgeInfo {
	out := make([]EdgeInfo, len(v.out))
	for i, e := range v.out {
		out[i] = EdgeInfo{From: e.from.id, To: e.to.id, Ship: e.ship.String(), Chained: e.chained()}
	}
	return out
}

// setTasks records the job's tasks once they are built.
func (j *job) setTasks(tasks []*task) {
	j.mu.Lock()
	j.tasks = tasks
	j.mu.Unlock()
}

// runningTasks returns the job's tasks while it is not terminal, else nil.
func (j *job) runningTasks() []*task {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.st.Terminal() {
		return nil
	}
	return j.tasks
}

// chainOf lists the vertices of the task headed by head, head first.
func chainOf(head *vertex) []*vertex {
	vs := []*vertex{head}
	for i := 0; i < len(vs); i++ {
		for _, e := range vs[i].out {
			if e.chained() {
				vs = append(vs, e.to)
			}
		}
	}
	return vs
}
