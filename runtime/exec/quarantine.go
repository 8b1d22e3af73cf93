package exec

import (
	"errors"
	"sync"

	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/plan"
)

// blobQuarantine is the kind of a quarantine's snapshot blobs
// (operator.Quarantine.StateKind).
const blobQuarantine = "quarantine"

// Quarantines are the quarantines of the job's current run, one per keyed
// operator subtask under on_udf_error: quarantine. The API lists and
// releases poison keys through them. Safe for concurrent use.
type Quarantines struct {
	mu sync.Mutex
	// byVertex holds each vertex's quarantines by subtask, replaced as a
	// run builds its tasks.
	byVertex map[string][]*operator.Quarantine
	order    []string
}

func (r *Quarantines) set(v *plan.Vertex, subtask int, q *operator.Quarantine) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byVertex == nil {
		r.byVertex = map[string][]*operator.Quarantine{}
	}
	qs := r.byVertex[v.ID]
	if qs == nil {
		r.order = append(r.order, v.ID)
	}
	if len(qs) != v.Parallelism {
		qs = make([]*operator.Quarantine, v.Parallelism)
		r.byVertex[v.ID] = qs
	}
	qs[subtask] = q
}

func (r *Quarantines) each(f func(subtask int, q *operator.Quarantine)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, id := range r.order {
		for i, q := range r.byVertex[id] {
			if q != nil {
				f(i, q)
			}
		}
	}
}

// List is every parked key, by operator, subtask and key.
func (r *Quarantines) List() []operator.QuarantinedKey {
	out := []operator.QuarantinedKey{}
	r.each(func(i int, q *operator.Quarantine) { out = append(out, q.List(i)...) })
	return out
}

// Release asks every operator subtask where key is parked to replay its
// records; operator.ErrNotQuarantined when none has it parked.
func (r *Quarantines) Release(key string) ([]operator.QuarantinedKey, error) {
	var released []operator.QuarantinedKey
	var errs []error
	r.each(func(i int, q *operator.Quarantine) {
		for _, k := range q.List(i) {
			if k.Key != key {
				continue
			}
			if err := q.Release(key); err != nil {
				errs = append(errs, err)
				continue
			}
			released = append(released, k)
		}
	})
	if len(released) == 0 {
		if err := errors.Join(errs...); err != nil {
			return nil, err
		}
		return nil, operator.ErrNotQuarantined
	}
	return released, nil
}

// quarantine is the quarantine before subtask i of vertex v, when the job
// quarantines poison keys and v is a record or process operator after a
// key_by; nil otherwise. It takes the failed records of policy.
func (b *builder) quarantine(t *Task, v *plan.Vertex, i int, policy *operator.ErrorPolicy) *operator.Quarantine {
	on := b.j.Plan.Job.OnUDFError
	if on.Policy != operator.OnErrorQuarantine || v.Source != nil || v.Sink != nil || v.Window != nil || v.Join != nil ||
		len(v.In) != 1 || v.In[0].Ship != plan.ShipHash {
		return nil
	}
	q := &operator.Quarantine{Vertex: v.ID, After: on.After, Budget: on.Budget, DeadLetter: t.dlq, Counts: policy.Counts}
	policy.Quarantine = q
	b.j.Quarantines.set(v, i, q)
	return q
}
