package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	neturl "net/url"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/cobra"
	"github.com/spf13/viper"

	"wasmstream.io/platform/api"
	"wasmstream.io/platform/cluster"
	"wasmstream.io/platform/connector"
	"wasmstream.io/platform/runtime/exchange"
	"wasmstream.io/platform/runtime/exec"
)

// config is the platform's configuration: flags > PLATFORM_* env > file >
// defaults, with the keys of the design.
type config struct {
	HTTPAddr string
	DataDir  string
	NATSURL  string
	// NATSHost and NATSPort are the embedded NATS server's client listen
	// address (nats.host, nats.port).
	NATSHost string
	NATSPort int
	// NATSConnectTimeout bounds making the platform's NATS connection at
	// start (nats.connect_timeout); 0 takes defaultNATSConnectTimeout.
	NATSConnectTimeout time.Duration
	// NATSReplicas is nats.replicas: the replicas of the platform's own
	// JetStream buckets on a NATS cluster (0 or 1: one).
	NATSReplicas int
	// Token is api.token, an admin token; Tokens is api.tokens.
	Token     string
	Tokens    []api.Token
	LogFormat string
	LogLevel  string
	// CheckpointStore is where checkpoints go: dir (data_dir/checkpoints)
	// or jetstream (an object store bucket).
	CheckpointStore string
	// Limits bounds uploads and the time requests take; zero fields are
	// the API's defaults.
	Limits apiLimits
	// TLSCert and TLSKey are api.tls.cert and api.tls.key: with them the
	// API serves HTTPS.
	TLSCert, TLSKey string
	// NATSAuth is how the platform authenticates to an external NATS
	// (nats.creds, nats.user, nats.password, nats.tls.*).
	NATSAuth connector.ClientAuth
	// Budgets bound the memory of the jobs' subtasks (budgets.*).
	Budgets exec.Budgets
	// JobRetention is jobs.retention: how long ended jobs are kept (0:
	// until deleted).
	JobRetention time.Duration
	// MemoryBudget bounds the linear memory of all Wasm instances
	// together (host.memory_budget); 0 takes host.DefaultMemoryBudget.
	MemoryBudget int64
	// Cluster is the cluster.* keys, used in cluster mode.
	Cluster clusterConfig
}

// clusterConfig are the cluster.* keys.
type clusterConfig struct {
	// WorkerID names this worker (default: the host name and a random
	// suffix, new at each start).
	WorkerID string
	// Slots is how many subtasks' worth of jobs the worker takes
	// (default: its core count).
	Slots int
	// WorkerTimeout declares a worker dead, and its jobs' leases expired,
	// after this long without a heartbeat.
	WorkerTimeout time.Duration
	// AdvertiseURL is the base URL other workers reach this one's API at
	// (default: from http.addr).
	AdvertiseURL string
}

// apiLimits are the api.* bounds of requests.
type apiLimits struct {
	MaxConcurrentUploads int
	UploadBytesInFlight  int64
	ReadTimeout          time.Duration
	UploadReadTimeout    time.Duration
	RequestTimeout       time.Duration
	UploadTimeout        time.Duration
}

// apiTokens are every token the API takes: api.token (an admin token the
// audit log calls api.token) and api.tokens.
func (c config) apiTokens() []api.Token {
	if c.Token == "" {
		return c.Tokens
	}
	return append([]api.Token{{Name: "api.token", Secret: c.Token, Scope: api.ScopeAdmin}}, c.Tokens...)
}

// clusterMode says whether this process shares its NATS with other
// platform processes: it does whenever NATS is external (nats.url). The
// embedded server is one process's own.
func (c config) clusterMode() bool { return c.NATSURL != "" }

// embeddedNATSAuth says whether the embedded NATS server requires the
// credentials the platform generates: with API authentication on (an open
// NATS would bypass it) and always in cluster mode.
func (c config) embeddedNATSAuth() bool {
	return c.Token != "" || len(c.Tokens) > 0 || c.clusterMode()
}

// bindConfig declares the configuration flags on cmd and returns a loader that
// resolves them with viper once the command runs.
func bindConfig(cmd *cobra.Command) func() (config, error) {
	v := viper.New()
	f := cmd.Flags()
	f.String("config", "", "configuration file (YAML, JSON or TOML)")
	f.String("http.addr", "127.0.0.1:8080", "HTTP API listen address")
	f.String("data_dir", "./data", "data directory (modules, JetStream store, compilation cache)")
	f.String("nats.url", "", "NATS server URL; empty runs the embedded server")
	f.String("nats.host", "127.0.0.1", "client listen host of the embedded NATS server (0.0.0.0: every interface)")
	f.Int("nats.port", 4222, "client port of the embedded NATS server (-1: any free port)")
	f.Duration("nats.connect_timeout", defaultNATSConnectTimeout, "time the first connection to NATS may take at start; serve fails after it")
	f.Int("nats.replicas", 1, "replicas of the platform's own JetStream buckets (job registry, checkpoints): 3 on a NATS cluster")
	f.String("api.token", "", "bearer token required by every /v1 call; empty disables auth")
	f.String("log.format", "text", "log format: text or json")
	f.String("log.level", "info", "log level: debug, info, warn or error")
	f.Duration("jobs.retention", defaultJobRetention, "ended jobs older than this are removed with their checkpoints (savepoints kept); 0s keeps them")
	f.String("checkpoint.store", "", "where checkpoints and savepoints go: dir (data_dir/checkpoints) or jetstream (object store bucket PLATFORM_CHECKPOINTS); empty: dir, or jetstream in cluster mode (nats.url set)")
	f.Int("api.max_concurrent_uploads", api.DefaultMaxConcurrentUploads, "module uploads in progress at once; more are answered 503 with Retry-After")
	f.Int64("api.upload_bytes_in_flight", api.DefaultUploadBytesInFlight, "bytes the bodies of the uploads in progress may hold together")
	f.Duration("api.read_timeout", api.DefaultReadTimeout, "time a request body may take to arrive (408 after)")
	f.Duration("api.upload_read_timeout", api.DefaultUploadReadTimeout, "time a module upload's body may take to arrive (408 after)")
	f.Duration("api.request_timeout", api.DefaultRequestTimeout, "deadline of every request (503 after)")
	f.Duration("api.upload_timeout", api.DefaultUploadTimeout, "deadline of a module upload, reading and compiling it (503 after)")
	f.String("api.tls.cert", "", "PEM certificate (chain) of the API; with api.tls.key the API serves HTTPS")
	f.String("api.tls.key", "", "PEM private key of api.tls.cert")
	f.String("nats.creds", "", "credentials file (user JWT and seed) for the external NATS")
	f.String("nats.user", "", "user name for the external NATS")
	f.String("nats.password", "", "password of nats.user")
	f.String("nats.tls.ca", "", "PEM file of the CAs the external NATS's certificate is checked against")
	f.String("nats.tls.cert", "", "PEM client certificate for the external NATS")
	f.String("nats.tls.key", "", "PEM private key of nats.tls.cert")
	f.Int64("budgets.keyed_state", exec.DefaultKeyedStateBudget, "bytes of keyed state (and interval-join buffers) a job may hold when its spec sets no state.budget")
	f.Int64("budgets.window_contents", exec.DefaultWindowContentsBudget, "bytes one window operator subtask may buffer")
	f.Int64("budgets.in_flight", exec.DefaultInFlightBudget, "bytes of in-flight data one task may record for one unaligned checkpoint")
	f.Int64("budgets.sink_staging", exec.DefaultSinkStagingBudget, "bytes an exactly-once sink subtask stages in memory per checkpoint before it spills to the data directory")
	f.Int("budgets.exchange_buffer_size", exchange.DefaultBufferSize, "bytes of one exchange buffer")
	f.Int("budgets.exchange_exclusive_buffers", exchange.DefaultExclusivePerChannel, "exclusive buffers (credits) of each exchange input channel")
	f.Int("budgets.exchange_floating_buffers", exchange.DefaultFloatingPerGate, "floating buffers of each task's exchange input gate")
	f.String("cluster.worker_id", "", "cluster mode: this worker's id; empty: the host name and a random suffix")
	f.Int("cluster.slots", 0, "cluster mode: subtasks' worth of jobs this worker takes; 0: its core count")
	f.Duration("cluster.worker_timeout", cluster.DefaultTimeout, "cluster mode: a worker without a heartbeat this long is dead and its jobs move to live workers")
	f.String("cluster.advertise_url", "", "cluster mode: base URL other workers reach this one's API at; empty: from http.addr")
	f.Int64("host.memory_budget", 0, "bytes of linear memory all Wasm instances may hold together; 0: half of the machine's memory, or of the cgroup's limit when lower")
	return func() (config, error) {
		v.SetEnvPrefix("PLATFORM")
		v.SetEnvKeyReplacer(strings.NewReplacer(".", "_"))
		v.AutomaticEnv()
		for _, key := range flagKeys {
			if err := v.BindPFlag(key, f.Lookup(key)); err != nil {
				return config{}, err
			}
		}
		if file, _ := f.GetString("config"); file != "" {
			v.SetConfigFile(file)
			if err := v.ReadInConfig(); err != nil {
				return config{}, fmt.Errorf("config file %s: %w", file, err)
			}
		}
		c := config{
			HTTPAddr:  v.GetString("http.addr"),
			DataDir:   v.GetString("data_dir"),
			NATSURL:   v.GetString("nats.url"),
			NATSHost:  v.GetString("nats.host"),
			NATSPort:  v.GetInt("nats.port"),
			Token:     v.GetString("api.token"),
			LogFormat: v.GetString("log.format"),
			LogLevel:  v.GetString("log.level"),

			CheckpointStore: v.GetString("checkpoint.store"),
			JobRetention:    v.GetDuration("jobs.retention"),
			Limits: apiLimits{
				MaxConcurrentUploads: v.GetInt("api.max_concurrent_uploads"),
				UploadBytesInFlight:  v.GetInt64("api.upload_bytes_in_flight"),
				ReadTimeout:          v.GetDuration("api.read_timeout"),
				UploadReadTimeout:    v.GetDuration("api.upload_read_timeout"),
				RequestTimeout:       v.GetDuration("api.request_timeout"),
				UploadTimeout:        v.GetDuration("api.upload_timeout"),
			},
			TLSCert: v.GetString("api.tls.cert"),
			TLSKey:  v.GetString("api.tls.key"),
			NATSAuth: connector.ClientAuth{
				Creds:    v.GetString("nats.creds"),
				User:     v.GetString("nats.user"),
				Password: v.GetString("nats.password"),
				TLSCA:    v.GetString("nats.tls.ca"),
				TLSCert:  v.GetString("nats.tls.cert"),
				TLSKey:   v.GetString("nats.tls.key"),
			},
			Budgets: exec.Budgets{
				KeyedState:         v.GetInt64("budgets.keyed_state"),
				WindowContents:     v.GetInt64("budgets.window_contents"),
				InFlight:           v.GetInt64("budgets.in_flight"),
				SinkStaging:        v.GetInt64("budgets.sink_staging"),
				ExchangeBufferSize: v.GetInt("budgets.exchange_buffer_size"),
				ExchangeExclusive:  v.GetInt("budgets.exchange_exclusive_buffers"),
				ExchangeFloating:   v.GetInt("budgets.exchange_floating_buffers"),
			},
			MemoryBudget:       v.GetInt64("host.memory_budget"),
			NATSConnectTimeout: v.GetDuration("nats.connect_timeout"),
			NATSReplicas:       v.GetInt("nats.replicas"),
			Cluster: clusterConfig{
				WorkerID:      v.GetString("cluster.worker_id"),
				Slots:         v.GetInt("cluster.slots"),
				WorkerTimeout: v.GetDuration("cluster.worker_timeout"),
				AdvertiseURL:  v.GetString("cluster.advertise_url"),
			},
		}
		if err := c.Budgets.Check(); err != nil {
			return config{}, err
		}
		if c.MemoryBudget < 0 {
			return config{}, fmt.Errorf("host.memory_budget: must not be negative, got %d", c.MemoryBudget)
		}
		var err error
		if c.Tokens, err = tokensOf(v); err != nil {
			return config{}, err
		}
		if err := api.ValidateTokens(c.apiTokens()); err != nil {
			return config{}, fmt.Errorf("api.tokens: %w", err)
		}
		if err := c.Limits.check(); err != nil {
			return config{}, err
		}
		if (c.TLSCert == "") != (c.TLSKey == "") {
			return config{}, errors.New("api.tls.cert and api.tls.key go together: set both or neither")
		}
		if c.NATSURL == "" && !c.NATSAuth.IsZero() {
			return config{}, errors.New("nats.creds, nats.user, nats.password and nats.tls.* are for an external NATS (nats.url); the embedded server's credentials are generated")
		}
		if _, err := c.NATSAuth.Options(); err != nil {
			return config{}, fmt.Errorf("nats: %w", err)
		}
		if c.CheckpointStore == "" {
			c.CheckpointStore = "dir"
			if c.clusterMode() {
				c.CheckpointStore = "jetstream"
			}
		}
		if c.CheckpointStore != "dir" && c.CheckpointStore != "jetstream" {
			return config{}, fmt.Errorf("checkpoint.store: %q is not dir or jetstream", c.CheckpointStore)
		}
		if err := c.Cluster.check(); err != nil {
			return config{}, err
		}
		if c.NATSConnectTimeout <= 0 {
			return config{}, fmt.Errorf("nats.connect_timeout: %s is not positive", c.NATSConnectTimeout)
		}
		if c.NATSReplicas < 1 || c.NATSReplicas > maxNATSReplicas {
			return config{}, fmt.Errorf("nats.replicas: %d is not between 1 and %d", c.NATSReplicas, maxNATSReplicas)
		}
		if c.JobRetention < 0 {
			return config{}, fmt.Errorf("jobs.retention: %s is negative; 0s keeps ended jobs", c.JobRetention)
		}
		if c.LogFormat != "text" && c.LogFormat != "json" {
			return config{}, fmt.Errorf("log.format: %q is not text or json", c.LogFormat)
		}
		return c, nil
	}
}

// maxNATSReplicas is the most replicas JetStream keeps of a stream.
const maxNATSReplicas = 5

// defaultJobRetention is jobs.retention's default: a week.
const defaultJobRetention = 7 * 24 * time.Hour

// flagKeys are the keys bound to flags of the same name.
var flagKeys = []string{"http.addr", "data_dir", "nats.url", "nats.host", "nats.port", "nats.connect_timeout", "nats.replicas", "api.token", "log.format", "log.level", "checkpoint.store", "jobs.retention",
	"api.max_concurrent_uploads", "api.upload_bytes_in_flight", "api.read_timeout", "api.upload_read_timeout",
	"api.request_timeout", "api.upload_timeout", "api.tls.cert", "api.tls.key",
	"nats.creds", "nats.user", "nats.password", "nats.tls.ca", "nats.tls.cert", "nats.tls.key",
	"budgets.keyed_state", "budgets.window_contents", "budgets.in_flight", "budgets.sink_staging",
	"budgets.exchange_buffer_size", "budgets.exchange_exclusive_buffers", "budgets.exchange_floating_buffers",
	"host.memory_budget",
	"cluster.worker_id", "cluster.slots", "cluster.worker_timeout", "cluster.advertise_url"}

// tokenEntry is one entry of api.tokens.
type tokenEntry struct {
	Name  string `mapstructure:"name" json:"name"`
	Token string `mapstructure:"token" json:"token"`
	Scope string `mapstructure:"scope" json:"scope"`
}

// tokensOf reads api.tokens: a list of {token, scope, name} in the config
// file, or the same list as JSON in PLATFORM_API_TOKENS.
func tokensOf(v *viper.Viper) ([]api.Token, error) {
	var entries []tokenEntry
	switch raw := v.Get("api.tokens").(type) {
	case nil:
		return nil, nil
	case string:
		if raw == "" {
			return nil, nil
		}
		if err := json.Unmarshal([]byte(raw), &entries); err != nil {
			return nil, fmt.Errorf("api.tokens: not a JSON list of {token, scope, name}: %w", err)
		}
	default:
		if err := v.UnmarshalKey("api.tokens", &entries, func(dc *mapstructure.DecoderConfig) { dc.ErrorUnused = true }); err != nil {
			return nil, fmt.Errorf("api.tokens: %w", err)
		}
	}
	tokens := make([]api.Token, len(entries))
	for i, e := range entries {
		scope, err := api.ParseScope(e.Scope)
		if err != nil {
			return nil, fmt.Errorf("api.tokens[%d]: %w", i, err)
		}
		name := e.Name
		if name == "" {
			name = fmt.Sprintf("api.tokens[%d]", i)
		}
		tokens[i] = api.Token{Name: name, Secret: e.Token, Scope: scope}
	}
	return tokens, nil
}

// check refuses cluster.* values that cannot work.
func (c clusterConfig) check() error {
	switch {
	case c.Slots < 0:
		return fmt.Errorf("cluster.slots: must not be negative, got %d", c.Slots)
	case c.WorkerTimeout < 100*time.Millisecond:
		return fmt.Errorf("cluster.worker_timeout: %s is too short; at least 100ms", c.WorkerTimeout)
	}
	if c.AdvertiseURL != "" {
		u, err := neturl.Parse(c.AdvertiseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("cluster.advertise_url: %q is not an http(s) URL with a host", c.AdvertiseURL)
		}
	}
	return nil
}

// check refuses negative bounds.
func (l apiLimits) check() error {
	switch {
	case l.MaxConcurrentUploads < 0:
		return errors.New("api.max_concurrent_uploads: must not be negative")
	case l.UploadBytesInFlight < 0:
		return errors.New("api.upload_bytes_in_flight: must not be negative")
	}
	for key, d := range map[string]time.Duration{"api.read_timeout": l.ReadTimeout, "api.upload_read_timeout": l.UploadReadTimeout,
		"api.request_timeout": l.RequestTimeout, "api.upload_timeout": l.UploadTimeout} {
		if d < 0 {
			return fmt.Errorf("%s: must not be negative", key)
		}
	}
	return nil
}

// logger builds the platform's slog logger.
func (c config) logger(w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.LogLevel)); err != nil {
		return nil, fmt.Errorf("log.level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: level}
	if c.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return slog.New(slog.NewTextHandler(w, opts)), nil
}
