package state

import (
	"fmt"
	"sync/atomic"
)

// Budget bounds the memory of the memory backends that share it (the keyed
// state of one job). It is safe for concurrent use. Backends reserve from it
// in chunks, so Used moves in steps of up to budgetChunk per backend.
type Budget struct {
	limit int64
	used  atomic.Int64
}

// budgetChunk is how much a backend reserves at a time.
const budgetChunk = 64 << 10

// NewBudget makes a budget of limit bytes.
func NewBudget(limit int64) *Budget { return &Budget{limit: limit} }

// Limit is the budget in bytes.
func (b *Budget) Limit() int64 { return b.limit }

// Used is the bytes reserved.
func (b *Budget) Used() int64 { return b.used.Load() }

func (b *Budget) reserve(n int64) error {
	if used := b.used.Add(n); used > b.limit {
		b.used.Add(-n)
		return &BudgetError{Limit: b.limit, Used: used - n, Need: n}
	}
	return nil
}

func (b *Budget) release(n int64) { b.used.Add(-n) }

// BudgetError is a write that would take the memory backend past its
// budget. It fails the job: state cannot be dropped.
type BudgetError struct {
	Limit, Used, Need int64
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("keyed state needs more than its memory budget of %d bytes (%d in use, %d more needed): "+
		"raise state.budget, or keep state on disk with state: {backend: pebble}", e.Limit, e.Used, e.Need)
}

// accountant tracks one backend's bytes and reserves them from a budget in
// chunks. It belongs to the backend's goroutine.
type accountant struct {
	budget   *Budget
	bytes    int64
	reserved int64
	// published is reserved, for readers on other goroutines; it changes
	// only when reserved does, in chunks.
	published atomic.Int64
}

// grow accounts delta more bytes (less when negative). It fails, changing
// nothing, when the budget cannot cover them.
func (a *accountant) grow(delta int64) error {
	a.bytes += delta
	if a.budget == nil {
		return nil
	}
	switch {
	case a.bytes > a.reserved:
		need := max(a.bytes-a.reserved, budgetChunk)
		if err := a.budget.reserve(need); err != nil {
			a.bytes -= delta
			return err
		}
		a.reserved += need
		a.published.Store(a.reserved)
	case a.reserved-a.bytes > 2*budgetChunk:
		spare := a.reserved - a.bytes - budgetChunk
		a.budget.release(spare)
		a.reserved -= spare
		a.published.Store(a.reserved)
	}
	return nil
}

// close hands every reserved byte back.
func (a *accountant) close() {
	if a.budget != nil {
		a.budget.release(a.reserved)
	}
	a.reserved, a.bytes = 0, 0
	a.published.Store(0)
}
