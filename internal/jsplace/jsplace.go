// Package jsplace creates replicated JetStream assets (streams, KV buckets,
// object stores) on a cluster that may not be able to place their replicas
// yet: a cluster that has just started, or whose meta leader has not yet
// heard from enough peers, answers "no suitable peers for placement" or
// "JetStream system temporarily unavailable" for a few seconds. A worker
// started beside such a cluster waits for it instead of failing. It also
// reads such assets through their stream's leader where a replica's stale
// answer would mislead (leader.go).
package jsplace

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Wait bounds how long Create retries.
const Wait = 30 * time.Second

// retryEvery is the pause between tries.
const retryEvery = 250 * time.Millisecond

// The JetStream API's error codes that pass once the cluster has formed.
const (
	noPeersForPlacement    jetstream.ErrorCode = 10005
	temporarilyUnavailable jetstream.ErrorCode = 10008
)

// Transient says whether err is the cluster not being able to place an
// asset yet.
func Transient(err error) bool {
	var apiErr *jetstream.APIError
	if !errors.As(err, &apiErr) {
		return false
	}
	return apiErr.ErrorCode == noPeersForPlacement || apiErr.ErrorCode == temporarilyUnavailable
}

// Create calls create until it succeeds, fails with an error that is not
// Transient, ctx ends, or Wait has passed.
func Create[T any](ctx context.Context, create func(context.Context) (T, error)) (T, error) {
	deadline := time.Now().Add(Wait)
	for {
		v, err := create(ctx)
		if err == nil || !Transient(err) {
			return v, err
		}
		if time.Now().After(deadline) {
			return v, fmt.Errorf("still after %s: %w", Wait, err)
		}
		select {
		case <-ctx.Done():
			return v, fmt.Errorf("%w (waiting for the cluster to place replicas: %w)", ctx.Err(), err)
		case <-time.After(retryEvery):
		}
	}
}
