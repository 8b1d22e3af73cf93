package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	neturl "net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/nats-io/nats.go"

	"wasmstream.io/platform/api"
	"wasmstream.io/platform/checkpoint"
	"wasmstream.io/platform/cluster"
	"wasmstream.io/platform/connector"
	"wasmstream.io/platform/host"
	"wasmstream.io/platform/runtime"
)

// checkpointBucket is the object store bucket of checkpoint.store: jetstream.
const checkpointBucket = "PLATFORM_CHECKPOINTS"

// natsUserKeyFile is the data directory's file holding the nkey seed of the
// embedded server's one user, the platform itself (mode 0600).
const natsUserKeyFile = "nats-user.nk"

// HTTP server timeouts that hold for every route: headers must arrive within
// readHeaderTimeout, and an idle keep-alive connection is closed after
// idleTimeout. Bodies and handlers have the api.* timeouts.
const (
	readHeaderTimeout = 10 * time.Second
	idleTimeout       = 2 * time.Minute
)

// server is one running platform process: NATS (embedded or remote), the
// wazero host, the job manager and the HTTP API.
type server struct {
	cfg      config
	log      *slog.Logger
	lock     *dataDirLock
	embedded *connector.Embedded
	nc       *nats.Conn
	host     *host.Host
	manager  *runtime.Manager
	http     *http.Server
	listener net.Listener
	served   chan error
}

// startServer starts every part in dependency order; on failure it stops what
// it started. It first takes the data directory's lock, so that a second
// process on the same directory starts nothing.
func startServer(ctx context.Context, cfg config, log *slog.Logger) (s *server, err error) {
	s = &server{cfg: cfg, log: log, served: make(chan error, 1)}
	defer func() {
		if err != nil {
			s.stop(context.Background())
			s = nil
		}
	}()
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return s, fmt.Errorf("data_dir: %w", err)
	}
	if s.lock, err = lockDataDir(cfg.DataDir); err != nil {
		return s, err
	}
	url := cfg.NATSURL
	auth := cfg.NATSAuth
	if url == "" {
		ecfg := connector.EmbeddedConfig{
			DataDir: filepath.Join(cfg.DataDir, "nats"), Host: cfg.NATSHost, Port: cfg.NATSPort, Logger: log.With("component", "nats"),
		}
		if !loopback(cfg.NATSHost) && !cfg.embeddedNATSAuth() {
			log.Warn("the embedded NATS server listens beyond loopback without authentication: anyone who reaches it can read and write every stream; set api.token to require the platform's credentials",
				"nats.host", cfg.NATSHost)
		}
		if cfg.embeddedNATSAuth() {
			keyFile := filepath.Join(cfg.DataDir, natsUserKeyFile)
			seed, public, narrowed, err := connector.LoadOrCreateUserKey(keyFile)
			if err != nil {
				return s, fmt.Errorf("embedded nats: %w", err)
			}
			if narrowed {
				log.Warn("the NATS user key was readable by others: its mode is 0600 again", "file", keyFile)
			}
			ecfg.Users = []string{public}
			auth = connector.ClientAuth{NkeySeed: seed}
		}
		s.embedded, err = connector.StartEmbedded(ctx, ecfg)
		if err != nil {
			return s, fmt.Errorf("embedded nats: %w", err)
		}
		url = loopbackURL(s.embedded.ClientURL())
	}
	// This is the platform's one NATS connection: the job registry, the
	// checkpoint store, sources and sinks all use it.
	natsOpts, err := auth.Options()
	if err != nil {
		return s, fmt.Errorf("nats: %w", err)
	}
	timeout := cfg.natsConnectTimeout()
	nc, js, err := connectNATS(ctx, url, timeout, natsOpts...)
	if err != nil {
		if cfg.NATSURL == "" {
			return s, fmt.Errorf("embedded nats %s (nats.connect_timeout %s): %w", url, timeout, err)
		}
		return s, fmt.Errorf("cannot reach NATS at nats.url %s (nats.connect_timeout %s): %w", url, timeout, err)
	}
	s.nc = nc
	s.host, err = host.New(ctx, host.Config{CacheDir: filepath.Join(cfg.DataDir, "cache"), Logger: log.With("component", "udf"), MemoryBudget: cfg.MemoryBudget})
	if err != nil {
		return s, err
	}
	var tlsConfig *tls.Config
	if cfg.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(cfg.TLSCert, cfg.TLSKey)
		if err != nil {
			return s, fmt.Errorf("api.tls: %w", err)
		}
		tlsConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	// The listener comes before the manager: a worker registers the
	// address it serves at when it joins a cluster.
	s.listener, err = net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		return s, fmt.Errorf("http.addr: %w", err)
	}
	replicas := 1
	var clusterCfg *cluster.Config
	if cfg.clusterMode() {
		replicas = cfg.NATSReplicas
		clusterCfg = workerConfig(cfg, s.listener.Addr(), tlsConfig != nil, log)
	}
	var store checkpoint.Store
	if cfg.CheckpointStore == "jetstream" {
		if store, err = checkpoint.NewObjectStore(ctx, js, checkpointBucket, replicas); err != nil {
			return s, fmt.Errorf("checkpoint.store: %w", err)
		}
	}
	s.manager, err = runtime.NewManager(ctx, runtime.Config{DataDir: cfg.DataDir, Host: s.host, JetStream: js, Checkpoints: store, Logger: log,
		Budgets: cfg.Budgets, JobRetention: cfg.JobRetention, Cluster: clusterCfg, SharedModules: cfg.clusterMode()})
	if err != nil {
		return s, err
	}
	handler := api.New(api.Config{
		Modules: s.manager, Jobs: s.manager, Checkpoints: s.manager, Tokens: cfg.apiTokens(),
		Logger:               log.With("component", "api"),
		MaxConcurrentUploads: cfg.Limits.MaxConcurrentUploads,
		UploadBytesInFlight:  cfg.Limits.UploadBytesInFlight,
		ReadTimeout:          cfg.Limits.ReadTimeout,
		UploadReadTimeout:    cfg.Limits.UploadReadTimeout,
		RequestTimeout:       cfg.Limits.RequestTimeout,
		UploadTimeout:        cfg.Limits.UploadTimeout,
		Metrics:              api.MetricsHandler(version, s.manager.Collector()),
		Cluster:              s.manager,
		Ready: func() error {
			if !s.nc.IsConnected() {
				return errors.New("not connected to NATS")
			}
			return nil
		},
	})
	s.http = &http.Server{Handler: handler, ReadHeaderTimeout: readHeaderTimeout, IdleTimeout: idleTimeout,
		TLSConfig: tlsConfig, ErrorLog: slog.NewLogLogger(log.With("component", "http").Handler(), slog.LevelWarn)}
	scheme := "http"
	if tlsConfig != nil {
		scheme = "https"
		go func() { s.served <- s.http.ServeTLS(s.listener, "", "") }()
	} else {
		go func() { s.served <- s.http.Serve(s.listener) }()
	}
	log.Info("platform serving", "http", scheme+"://"+s.listener.Addr().String(), "nats", url, "data_dir", cfg.DataDir,
		"nats_auth", !auth.IsZero())
	return s, nil
}

// addr is the HTTP API's address.
func (s *server) addr() string { return s.listener.Addr().String() }

// stop shuts everything down in reverse order.
func (s *server) stop(ctx context.Context) {
	if s.http != nil {
		if err := s.http.Shutdown(ctx); err != nil {
			s.log.Warn("http shutdown", "error", err)
		}
	} else if s.listener != nil {
		_ = s.listener.Close()
	}
	if s.manager != nil {
		if err := s.manager.Close(ctx); err != nil {
			s.log.Warn("jobs shutdown", "error", err)
		}
	}
	if s.host != nil {
		if err := s.host.Close(ctx); err != nil {
			s.log.Warn("host shutdown", "error", err)
		}
	}
	if s.nc != nil {
		s.nc.Close()
	}
	if s.embedded != nil {
		if err := s.embedded.Shutdown(ctx); err != nil {
			s.log.Warn("nats shutdown", "error", err)
		}
	}
	if err := s.lock.release(); err != nil {
		s.log.Warn("data_dir unlock", "error", err)
	}
}

// loopback says whether host (nats.host) is only reachable from this
// machine: empty (the default, 127.0.0.1), localhost or a loopback address.
func loopback(host string) bool {
	if host == "" || host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// loopbackURL is the embedded server's client URL for the platform itself:
// a server listening on every interface (0.0.0.0, ::) is reached over
// 127.0.0.1.
func loopbackURL(clientURL string) string {
	u, err := neturl.Parse(clientURL)
	if err != nil {
		return clientURL
	}
	if ip := net.ParseIP(u.Hostname()); ip != nil && ip.IsUnspecified() {
		u.Host = net.JoinHostPort("127.0.0.1", u.Port())
	}
	return u.String()
}
