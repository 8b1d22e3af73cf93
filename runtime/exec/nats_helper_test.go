package exec

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/connector"
)

// embeddedNATS starts a NATS server with JetStream for the test and
// connects to it; both end with the test.
func embeddedNATS(t *testing.T) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := connector.StartEmbedded(ctx, connector.EmbeddedConfig{DataDir: t.TempDir(), Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	nc, js, err := connector.Connect(ctx, srv.ClientURL(), t.Name())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc, js
}
