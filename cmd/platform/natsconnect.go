package main

import (
	"context"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/connector"
)

// defaultNATSConnectTimeout is nats.connect_timeout's default.
const defaultNATSConnectTimeout = 5 * time.Second

// natsConnectTimeout is nats.connect_timeout, its default when unset.
func (c config) natsConnectTimeout() time.Duration {
	if c.NATSConnectTimeout <= 0 {
		return defaultNATSConnectTimeout
	}
	return c.NATSConnectTimeout
}

// connectNATS makes the platform's connection to url within timeout (the
// caller's error says which server url is). connector.Connect bounds each
// server's dial by the context's deadline, but it tries the servers of a
// list one after the other, and a server that accepts the connection but
// never answers holds it for the handshake too: the wait is bounded here as
// a whole, and a connection made after the deadline is closed.
func connectNATS(ctx context.Context, url string, timeout time.Duration, opts ...nats.Option) (*nats.Conn, jetstream.JetStream, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	type connected struct {
		nc  *nats.Conn
		js  jetstream.JetStream
		err error
	}
	done := make(chan connected, 1)
	go func() {
		nc, js, err := connector.Connect(ctx, url, "platform", opts...)
		done <- connected{nc, js, err}
	}()
	var r connected
	select {
	case r = <-done:
		// A dial or handshake bounded by ctx's deadline fails at it or
		// after: what ended it is the deadline.
		if r.err != nil && ctx.Err() != nil {
			r.err = ctx.Err()
		}
	case <-ctx.Done():
		go func() {
			if late := <-done; late.nc != nil {
				late.nc.Close()
			}
		}()
		r.err = ctx.Err()
	}
	return r.nc, r.js, r.err
}
