package jsplace_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/connector"
	"wasmstream.io/platform/internal/jsplace"
)

// TestLastMsgFromLeader reads a KV key's last value, a deleted key's
// marker and a missing subject through the leader, as a KV Get would.
func TestLastMsgFromLeader(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := connector.StartEmbedded(ctx, connector.EmbeddedConfig{DataDir: t.TempDir(), Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Shutdown(context.Background()) }()
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "B"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, "a", []byte("one")); err != nil {
		t.Fatal(err)
	}
	rev, err := kv.Put(ctx, "a", []byte("two"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, "gone", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := kv.Delete(ctx, "gone"); err != nil {
		t.Fatal(err)
	}

	msg, err := jsplace.LastMsgFromLeader(ctx, js, "KV_B", "$KV.B.a")
	if err != nil {
		t.Fatal(err)
	}
	if string(msg.Data) != "two" || msg.Sequence != rev || msg.Subject != "$KV.B.a" || msg.Time.IsZero() {
		t.Fatalf("got %q at %d on %s (%v), want \"two\" at %d on $KV.B.a", msg.Data, msg.Sequence, msg.Subject, msg.Time, rev)
	}
	if msg.Header.Get("KV-Operation") != "" {
		t.Fatalf("a put has headers %v", msg.Header)
	}

	msg, err = jsplace.LastMsgFromLeader(ctx, js, "KV_B", "$KV.B.gone")
	if err != nil {
		t.Fatal(err)
	}
	if op := msg.Header.Get("KV-Operation"); op != "DEL" {
		t.Fatalf("a deleted key's marker has KV-Operation %q, want DEL", op)
	}

	if _, err := jsplace.LastMsgFromLeader(ctx, js, "KV_B", "$KV.B.never"); !errors.Is(err, jetstream.ErrMsgNotFound) {
		t.Fatalf("a key never written: %v, want ErrMsgNotFound", err)
	}
	var apiErr *jetstream.APIError
	if _, err := jsplace.LastMsgFromLeader(ctx, js, "NO_SUCH", "x"); !errors.As(err, &apiErr) || apiErr.ErrorCode != jetstream.JSErrCodeStreamNotFound {
		t.Fatalf("a missing stream: %v, want the API's stream-not-found", err)
	}
}
