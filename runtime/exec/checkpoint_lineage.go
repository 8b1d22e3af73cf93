package exec

import (
	"wasmstream.io/platform/checkpoint"
)

// Lineage is a cluster-mode job's record of which checkpoints are its own.
// A job runs on the worker holding its lease; when another worker takes the
// lease over, the one that lost it may still run for a while (it was
// paused) and write checkpoints to the shared store. Every checkpoint id is
// allocated, and every completion recorded, through the lease (the Fence
// the coordinator of each run gets), so that what such a process writes
// never counts and its ids are never taken again.
type Lineage interface {
	checkpoint.Fence
	// Counts reports whether checkpoint id completed in the job's lineage
	// (recorded through Complete by this or an earlier owner of the job);
	// a checkpoint in the store that does not count (one of a process that
	// had lost the lease) is never restored.
	Counts(id int64) bool
	// NextID is the least id the next checkpoint may take: ids an earlier
	// owner allocated are never taken again.
	NextID() int64
}

// own passes over the stored checkpoints of job that do not count in its
// lineage, those read and those whose metadata is corrupt: they are not
// corrupt, just not the job's, so they are left out silently. Without a
// Lineage every checkpoint counts.
func (c *Checkpoints) own(job string, all []*checkpoint.Metadata, corrupt []*checkpoint.CorruptError) ([]*checkpoint.Metadata, []*checkpoint.CorruptError) {
	if c.Lineage == nil {
		return all, corrupt
	}
	pass := func(id int64) bool {
		if c.Lineage.Counts(id) {
			return false
		}
		c.log().Debug("checkpoint not in the job's lineage, passed over", "job", job, "checkpoint", id)
		return true
	}
	var ours []*checkpoint.Metadata
	for _, m := range all {
		if !pass(m.ID) {
			ours = append(ours, m)
		}
	}
	var bad []*checkpoint.CorruptError
	for _, e := range corrupt {
		if !pass(e.ID) {
			bad = append(bad, e)
		}
	}
	return ours, bad
}

// firstID is the id of the first checkpoint of a run of job that restores
// restore (nil for none): past every id an earlier run took and the one it
// restores, and, in cluster mode, past every id an earlier owner of the job
// allocated.
func (c *Checkpoints) firstID(job string, restore *RestoreSet) int64 {
	c.mu.Lock()
	id := max(1, c.nextID)
	c.mu.Unlock()
	if restore != nil && restore.meta.Job == job {
		id = max(id, restore.meta.ID+1)
	}
	if c.Lineage != nil {
		id = max(id, c.Lineage.NextID())
	}
	return id
}
