package connector

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestMain fails the run when a goroutine started by this package outlives
// the tests: every Close and Shutdown waits for the goroutines it owns.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if leaked := ownGoroutines(); leaked != "" {
			fmt.Fprintf(os.Stderr, "goroutines of package connector still running:\n%s\n", leaked)
			code = 1
		}
	}
	os.Exit(code)
}

func ownGoroutines() string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var leaked []byte
	// The first stack is this goroutine's.
	for _, g := range bytes.Split(buf, []byte("\n\n"))[1:] {
		if bytes.Contains(g, []byte("wasmstream.io/platform/connector.")) {
			leaked = append(append(leaked, g...), "\n\n"...)
		}
	}
	return string(leaked)
}

// testServer is an embedded server on a random port with a connection to it.
type testServer struct {
	srv *Embedded
	nc  *nats.Conn
	js  jetstream.JetStream
}

// startServer starts an embedded server in a temporary directory and
// connects to it; both are closed when the test ends.
func startServer(tb testing.TB) *testServer {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := StartEmbedded(ctx, EmbeddedConfig{DataDir: tb.TempDir(), Port: -1})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := srv.Shutdown(context.Background()); err != nil {
			tb.Error(err)
		}
	})
	nc, js, err := Connect(ctx, srv.ClientURL(), tb.Name())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(nc.Close)
	return &testServer{srv: srv, nc: nc, js: js}
}

// testCtx is a context that ends when the test does, bounding any wait that
// a bug would make endless.
func testCtx(tb testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	tb.Cleanup(cancel)
	return ctx
}
