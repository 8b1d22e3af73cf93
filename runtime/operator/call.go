package operator

import (
	"context"
	"fmt"

	"wasmstream.io/platform/host"
)

// Caller runs one function of a module over a frame; host.Guest is the real
// one.
type Caller interface {
	Call(ctx context.Context, fn int, frame []byte) ([]byte, error)
	Close(ctx context.Context) error
}

// KeyedCaller is a caller that can run keyed functions: host.Guest, and the
// task's metered pool around it.
type KeyedCaller interface {
	Caller
	CallWith(ctx context.Context, fn int, frame []byte, env host.Env) ([]byte, error)
}

// CallKeyed runs a function over a frame, with env serving its state and
// timer imports when env is set.
func CallKeyed(ctx context.Context, pool Caller, fn int, frame []byte, env host.Env) ([]byte, error) {
	if env == nil {
		return pool.Call(ctx, fn, frame)
	}
	kc, ok := pool.(KeyedCaller)
	if !ok {
		return nil, fmt.Errorf("keyed function %d: %T cannot serve state", fn, pool)
	}
	return kc.CallWith(ctx, fn, frame, env)
}
