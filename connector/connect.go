package connector

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/internal/jsplace"
)

// Client settings used by Connect.
const (
	reconnectWait = 250 * time.Millisecond
	// asyncMaxPending is the JetStream context's bound on unacknowledged
	// async publishes. Each sink bounds itself with MaxInFlight; this only
	// has to exceed what all sinks sharing the connection can have in flight.
	asyncMaxPending = 1 << 16
	// publishAckTimeout fails an async publish whose acknowledgement never
	// arrives, so that Flush always ends.
	publishAckTimeout  = 30 * time.Second
	defaultDialTimeout = 5 * time.Second
)

// Connect dials url, reconnecting forever after the first connection is made,
// and returns the connection and a JetStream context on it. The dial is
// bounded by ctx's deadline (5 s without one). opts come after the defaults:
// credentials and TLS (ClientAuth.Options). The caller closes the
// connection.
func Connect(ctx context.Context, url, name string, opts ...nats.Option) (*nats.Conn, jetstream.JetStream, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, fmt.Errorf("connector: connect to %s: %w", url, err)
	}
	timeout := defaultDialTimeout
	if dl, ok := ctx.Deadline(); ok {
		timeout = time.Until(dl)
	}
	nc, err := nats.Connect(url, append([]nats.Option{
		nats.Name(name),
		nats.Timeout(timeout),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(reconnectWait),
	}, opts...)...)
	if err != nil {
		return nil, nil, fmt.Errorf("connector: connect to %s: %w", url, err)
	}
	js, err := jetstream.New(nc,
		jetstream.WithPublishAsyncMaxPending(asyncMaxPending),
		jetstream.WithPublishAsyncTimeout(publishAckTimeout),
	)
	if err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("connector: jetstream on %s: %w", url, err)
	}
	return nc, js, nil
}

// EnsureStream creates the file-backed stream name capturing subjects, or
// updates its subjects when it exists.
func EnsureStream(ctx context.Context, js jetstream.JetStream, name string, subjects ...string) error {
	return EnsureReplicatedStream(ctx, js, name, 1, subjects...)
}

// EnsureReplicatedStream is EnsureStream with replicas copies of the stream
// on a NATS cluster.
func EnsureReplicatedStream(ctx context.Context, js jetstream.JetStream, name string, replicas int, subjects ...string) error {
	_, err := jsplace.Create(ctx, func(ctx context.Context) (jetstream.Stream, error) {
		return js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
			Name:     name,
			Subjects: subjects,
			Storage:  jetstream.FileStorage,
			Replicas: max(replicas, 1),
		})
	})
	if err != nil {
		return fmt.Errorf("connector: ensure stream %q with subjects %q: %w", name, subjects, err)
	}
	return nil
}

// Link is the state of a NATS connection as the runtime asks for it.
type Link struct{ nc *nats.Conn }

// NewLink watches nc.
func NewLink(nc *nats.Conn) *Link { return &Link{nc: nc} }

// Reconnects counts the times the connection was re-established.
func (l *Link) Reconnects() uint64 { return l.nc.Stats().Reconnects }

// WaitConnected blocks until the connection is up (or closed for good,
// which is an error) or ctx ends.
func (l *Link) WaitConnected(ctx context.Context) error {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		switch l.nc.Status() {
		case nats.CONNECTED:
			return nil
		case nats.CLOSED:
			return fmt.Errorf("connector: the NATS connection is closed")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}
