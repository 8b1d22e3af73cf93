package exchange

import (
	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/state"
)

// Partitioner chooses the channel of a record on an edge. Broadcast needs
// none: the caller emits on every channel.
type Partitioner interface {
	Channel(rec *abi.Record) int
}

// Forward sends every record to one channel: the producer's own index on an
// edge between operators of equal parallelism.
type Forward int

// Channel is f.
func (f Forward) Channel(*abi.Record) int { return int(f) }

// Rebalance spreads records round robin over the channels.
type Rebalance struct {
	next, channels int
}

// NewRebalance starts at channel start mod channels; producers starting at
// their own index spread evenly from the first record.
func NewRebalance(channels, start int) *Rebalance {
	return &Rebalance{next: start % channels, channels: channels}
}

// Channel is the next channel in turn.
func (r *Rebalance) Channel(*abi.Record) int {
	c := r.next
	if r.next++; r.next == r.channels {
		r.next = 0
	}
	return c
}

// KeyGroups sends a record to the consumer subtask that owns its key's key
// group.
type KeyGroups struct {
	maxParallelism, channels int
}

// NewKeyGroups partitions by maxParallelism key groups over channels
// consumers.
func NewKeyGroups(maxParallelism, channels int) KeyGroups {
	return KeyGroups{maxParallelism: maxParallelism, channels: channels}
}

// Channel is the consumer owning the record key's key group.
func (k KeyGroups) Channel(rec *abi.Record) int {
	return state.OperatorIndex(state.KeyGroup(rec.Key, k.maxParallelism), k.maxParallelism, k.channels)
}
