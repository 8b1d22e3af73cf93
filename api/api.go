// Package api owns the HTTP control plane: uploading, naming and deleting
// modules, submitting, checking, inspecting, cancelling and deleting jobs, a job's
// backpressure, the metrics, liveness and readiness endpoints, and the web
// UI (ui/, embedded). Errors are RFC 9457 problem details of the kinds in
// one catalogue (catalogue.go). The routes are one table (routes.go) that
// the mux and the OpenAPI document at /v1/openapi.json (openapi.go) are
// made from; docs/API.md is the user's reference.
package api

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"wasmstream.io/platform/runtime"
)

// Modules stores and describes uploaded Wasm modules.
type Modules interface {
	UploadModule(ctx context.Context, wasm []byte) (runtime.ModuleInfo, error)
	// UploadNamedModule stores a module as the next version of a name.
	UploadNamedModule(ctx context.Context, wasm []byte, name string) (runtime.ModuleInfo, error)
	ListModules(ctx context.Context) ([]runtime.ModuleInfo, error)
	// GetModule and DeleteModule take an id or name@version (GetModule
	// also a name: its latest version).
	GetModule(ctx context.Context, ref string) (runtime.ModuleInfo, error)
	DeleteModule(ctx context.Context, ref string) error
}

// Jobs submits, describes and cancels jobs.
type Jobs interface {
	SubmitJob(ctx context.Context, spec []byte) (runtime.JobInfo, error)
	// ValidateJob runs every check of a submission, from the savepoint
	// from when set, and says what the job would run, without starting it.
	ValidateJob(ctx context.Context, spec []byte, from string, allowNonRestored bool) (runtime.JobPlan, error)
	ListJobs(ctx context.Context) ([]runtime.JobInfo, error)
	GetJob(ctx context.Context, id string) (runtime.JobInfo, error)
	CancelJob(ctx context.Context, id string) (runtime.JobInfo, error)
	// JobSpec returns the spec a job was submitted with and its media type.
	JobSpec(ctx context.Context, id string) ([]byte, string, error)
	// DeleteJob removes a job that has ended, with its checkpoints, and
	// its savepoints too when savepoints is set.
	DeleteJob(ctx context.Context, id string, savepoints bool) error
	// Backpressure reports a job's backpressure over the last sampled
	// interval and its bottleneck.
	Backpressure(ctx context.Context, id string) (runtime.BackpressureInfo, error)
}

// Default body limits.
const (
	DefaultMaxModuleSize = 64 << 20
	DefaultMaxSpecSize   = 1 << 20
)

// Config configures the handler New returns.
type Config struct {
	Modules Modules
	Jobs    Jobs
	// Checkpoints serves checkpoints and savepoints (and from_savepoint);
	// nil leaves those routes out.
	Checkpoints Checkpoints
	// Token, when set, is a bearer token of scope admin.
	Token string
	// Tokens are further bearer tokens, each with its scope. With Token or
	// Tokens set every /v1 request must carry one whose scope covers it;
	// with neither there is no authentication. ValidateTokens must accept
	// them.
	Tokens []Token
	// MaxModuleSize bounds an uploaded module; 0 means DefaultMaxModuleSize.
	MaxModuleSize int64
	// MaxSpecSize bounds a submitted job spec; 0 means DefaultMaxSpecSize.
	MaxSpecSize int64
	// MaxConcurrentUploads bounds the module uploads in progress;
	// UploadBytesInFlight the bytes their bodies hold together (an upload
	// without Content-Length counts as MaxModuleSize until it is read).
	// Beyond them an upload is answered 503 too-many-uploads with
	// Retry-After. 0 means DefaultMaxConcurrentUploads and
	// DefaultUploadBytesInFlight.
	MaxConcurrentUploads int
	UploadBytesInFlight  int64
	// ReadTimeout bounds the time a request body takes to arrive, and
	// UploadReadTimeout that of a module upload; a body still arriving
	// then is answered 408. 0 means DefaultReadTimeout and
	// DefaultUploadReadTimeout.
	ReadTimeout       time.Duration
	UploadReadTimeout time.Duration
	// RequestTimeout is the deadline of every request, and UploadTimeout
	// that of a module upload (reading and compiling it); a request still
	// being worked on then is answered 503 request-timeout. 0 means
	// DefaultRequestTimeout and DefaultUploadTimeout.
	RequestTimeout time.Duration
	UploadTimeout  time.Duration
	// Logger receives one line per request and the internal errors; nil
	// means slog.Default().
	Logger *slog.Logger
	// Metrics serves GET /metrics; nil means the Prometheus default registry.
	Metrics http.Handler
	// Ready reports why the process cannot serve yet; nil means always ready.
	Ready func() error
	// Cluster, in cluster mode, lists the workers and says where requests
	// about other workers' jobs go (forward.go); nil outside it.
	Cluster Cluster
}

type server struct {
	modules     Modules
	jobs        Jobs
	checkpoints Checkpoints
	maxModule   int64
	maxSpec     int64
	log         *slog.Logger
	ready       func() error
	auth        *authenticator
	uploads     *uploadLimiter
	cluster     Cluster

	readTimeout, uploadReadTimeout time.Duration
	requestTimeout, uploadTimeout  time.Duration
	// openapi is the OpenAPI document of the routes served.
	openapi []byte
}

// New returns the control plane's handler. It panics when Modules or Jobs is
// nil or a token is invalid, which are wiring mistakes.
func New(cfg Config) http.Handler {
	if cfg.Modules == nil || cfg.Jobs == nil {
		panic("api: Config.Modules and Config.Jobs are required")
	}
	tokens := cfg.Tokens
	if cfg.Token != "" {
		tokens = append([]Token{{Secret: cfg.Token, Scope: ScopeAdmin}}, tokens...)
	}
	if err := ValidateTokens(tokens); err != nil {
		panic("api: " + err.Error())
	}
	s := &server{
		modules:     cfg.Modules,
		jobs:        cfg.Jobs,
		checkpoints: cfg.Checkpoints,
		maxModule:   cfg.MaxModuleSize,
		maxSpec:     cfg.MaxSpecSize,
		log:         cfg.Logger,
		ready:       cfg.Ready,
		cluster:     cfg.Cluster,
		auth:        newAuthenticator(tokens),
		uploads: &uploadLimiter{
			maxCount: orDefault(cfg.MaxConcurrentUploads, DefaultMaxConcurrentUploads),
			maxBytes: orDefault(cfg.UploadBytesInFlight, DefaultUploadBytesInFlight),
		},
		readTimeout:       orDefault(cfg.ReadTimeout, DefaultReadTimeout),
		uploadReadTimeout: orDefault(cfg.UploadReadTimeout, DefaultUploadReadTimeout),
		requestTimeout:    orDefault(cfg.RequestTimeout, DefaultRequestTimeout),
		uploadTimeout:     orDefault(cfg.UploadTimeout, DefaultUploadTimeout),
	}
	if s.maxModule <= 0 {
		s.maxModule = DefaultMaxModuleSize
	}
	if s.maxSpec <= 0 {
		s.maxSpec = DefaultMaxSpecSize
	}
	// A module larger than all uploads may hold could never be taken.
	s.maxModule = min(s.maxModule, s.uploads.maxBytes)
	if s.log == nil {
		s.log = slog.Default()
	}
	metrics := cfg.Metrics
	if metrics == nil {
		metrics = promhttp.Handler()
	}

	mux := http.NewServeMux()
	var served []route
	for _, rt := range s.routes(metrics) {
		if rt.checkpoints && s.checkpoints == nil {
			continue
		}
		mux.Handle(rt.method+" "+rt.path, s.forwarding(rt, rt.handler))
		served = append(served, rt)
	}
	s.openapi = openAPI(served)
	mux.HandleFunc("GET /{$}", ui)
	mux.Handle("GET /ui/", uiAssets)

	// Outermost first: the request id and log line; the route, which the
	// rest depend on; the body's read deadline, set before anything reads;
	// authentication, scopes and the audit log; the request's deadline.
	return s.observe(withRoute(mux, s.bodyDeadline(s.guard(s.withTimeout(routeProblems(mux))))))
}

// orDefault is v, or def when v is not positive.
func orDefault[T int | int64 | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}
