package connector

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"
)

// EmbeddedConfig configures the NATS server that runs inside the platform
// process.
type EmbeddedConfig struct {
	// DataDir is the JetStream file store directory (required).
	DataDir string
	// Host is the client listen address; default "127.0.0.1" (loopback).
	Host string
	// Port is the client port: 0 means 4222, -1 a random free port.
	Port int
	// Logger receives the server's log; nil discards it.
	Logger *slog.Logger
	// Users are the public nkeys ("U...") of the only clients the server
	// accepts; empty accepts anonymous clients. Every client must then
	// connect with the seed of one of them (ClientAuth.NkeySeed).
	Users []string
}

// Embedded is a running embedded NATS server with JetStream.
type Embedded struct {
	srv *server.Server
}

// readyPoll is how long one readiness check waits before StartEmbedded looks
// at the context and the server's fatal errors again.
const readyPoll = 50 * time.Millisecond

// StartEmbedded starts a NATS server with JetStream and waits until it
// accepts connections. Startup failures the server reports (the port is in
// use, the store cannot be opened) are returned as errors; ctx bounds the
// wait.
func StartEmbedded(ctx context.Context, cfg EmbeddedConfig) (*Embedded, error) {
	if cfg.DataDir == "" {
		return nil, errors.New("connector: embedded NATS: DataDir is required")
	}
	host := cfg.Host
	if host == "" {
		host = "127.0.0.1"
	}
	port := cfg.Port
	if port == 0 {
		port = server.DEFAULT_PORT
	}
	opts := &server.Options{
		ServerName: "platform",
		Host:       host,
		Port:       port,
		JetStream:  true,
		StoreDir:   cfg.DataDir,
		NoSigs:     true,
	}
	for _, u := range cfg.Users {
		if !nkeys.IsValidPublicUserKey(u) {
			return nil, fmt.Errorf("connector: embedded NATS: %q is not a public user nkey", u)
		}
		opts.Nkeys = append(opts.Nkeys, &server.NkeyUser{Nkey: u})
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("connector: embedded NATS on %s:%d: %w", host, port, err)
	}
	log := newServerLog(cfg.Logger)
	srv.SetLoggerV2(log, false, false, false)
	srv.Start()
	for !srv.ReadyForConnections(readyPoll) {
		select {
		case msg := <-log.fatal:
			shutdown(srv)
			return nil, fmt.Errorf("connector: embedded NATS on %s:%d: %s", host, port, msg)
		case <-ctx.Done():
			shutdown(srv)
			return nil, fmt.Errorf("connector: embedded NATS on %s:%d not ready: %w", host, port, ctx.Err())
		default:
		}
	}
	return &Embedded{srv: srv}, nil
}

func shutdown(srv *server.Server) {
	srv.Shutdown()
	srv.WaitForShutdown()
}

// ClientURL is the URL clients connect to.
func (e *Embedded) ClientURL() string { return e.srv.ClientURL() }

// Shutdown stops the server gracefully, flushing JetStream's store, and waits
// until it has stopped or ctx is done. When ctx ends first the shutdown goes
// on in the background and ctx's error is returned.
func (e *Embedded) Shutdown(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		shutdown(e.srv)
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("connector: embedded NATS shutdown: %w", ctx.Err())
	}
}
