package runtime

import (
	"wasmstream.io/platform/runtime/exec"
	"wasmstream.io/platform/runtime/plan"
)

// edgeInfos describes the edges out of v.
func edgeInfos(v *plan.Vertex) []EdgeInfo {
	out := make([]EdgeInfo, len(v.Out))
	for i, e := range v.Out {
		out[i] = EdgeInfo{From: e.From.ID, To: e.To.ID, Ship: e.Ship.String(), Chained: e.Chained()}
	}
	return out
}

// setTasks records the job's tasks once they are built.
func (j *job) setTasks(tasks []*exec.Task) {
	j.mu.Lock()
	j.tasks = tasks
	j.mu.Unlock()
}

// runningTasks returns the job's tasks while it is not terminal, else nil.
func (j *job) runningTasks() []*exec.Task {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.st.Terminal() {
		return nil
	}
	return j.tasks
}

// chainOf lists the vertices of the task headed by head, head first.
func chainOf(head *plan.Vertex) []*plan.Vertex {
	vs := []*plan.Vertex{head}
	for i := 0; i < len(vs); i++ {
		for _, e := range vs[i].Out {
			if e.Chained() {
				vs = append(vs, e.To)
			}
		}
	}
	return vs
}
