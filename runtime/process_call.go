package runtime

import (
	"context"
	"fmt"

	"wasmstream.io/platform/host"
)

// keyedCaller is a caller that can run keyed functions: host.Guest, and the
// task's metered pool around it.
type keyedCaller interface {
	caller
	CallWith(ctx context.Context, fn int, frame []byte, env host.Env) ([]byte, error)
}

// callKeyed runs a function over a frame, with env serving its state and
// timer imports when env is set.
func callKeyed(ctx context.Context, pool caller, fn int, frame []byte, env host.Env) ([]byte, error) {
	if env == nil {
		return pool.Call(ctx, fn, frame)
	}
	kc, ok := pool.(keyedCaller)
	if !ok {
		return nil, fmt.Errorf("keyed function %d: %T cannot serve state", fn, pool)
	}
	return kc.CallWith(ctx, fn, frame, env)
}
