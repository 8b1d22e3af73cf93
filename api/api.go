// Package api owns the HTTP control plane: uploading and deleting modules,
// submitting, checking, inspecting and cancelling jobs, a job's
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

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"wasmstream.io/platform/runtime"
)

// Modules stores and describes uploaded Wasm modules.
type Modules interface {
	UploadModule(ctx context.Context, wasm []byte) (runtime.ModuleInfo, error)
	ListModules(ctx context.Context) ([]runtime.ModuleInfo, error)
	GetModule(ctx context.Context, id string) (runtime.ModuleInfo, error)
	DeleteModule(ctx context.Context, id string) error
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
	// Token, when set, is the bearer token every /v1 request must carry.
	Token string
	// MaxModuleSize bounds an uploaded module; 0 means DefaultMaxModuleSize.
	MaxModuleSize int64
	// MaxSpecSize bounds a submitted job spec; 0 means DefaultMaxSpecSize.
	MaxSpecSize int64
	// Logger receives one line per request and the internal errors; nil
	// means slog.Default().
	Logger *slog.Logger
	// Metrics serves GET /metrics; nil means the Prometheus default registry.
	Metrics http.Handler
	// Ready reports why the process cannot serve yet; nil means always ready.
	Ready func() error
}

type server struct {
	modules     Modules
	jobs        Jobs
	checkpoints Checkpoints
	maxModule   int64
	maxSpec     int64
	log         *slog.Logger
	ready       func() error
	// openapi is the OpenAPI document of the routes served.
	openapi []byte
}

// New returns the control plane's handler. It panics when Modules or Jobs is
// nil, which is a wiring mistake.
func New(cfg Config) http.Handler {
	if cfg.Modules == nil || cfg.Jobs == nil {
		panic("api: Config.Modules and Config.Jobs are required")
	}
	s := &server{
		modules:     cfg.Modules,
		jobs:        cfg.Jobs,
		checkpoints: cfg.Checkpoints,
		maxModule:   cfg.MaxModuleSize,
		maxSpec:     cfg.MaxSpecSize,
		log:         cfg.Logger,
		ready:       cfg.Ready,
	}
	if s.maxModule <= 0 {
		s.maxModule = DefaultMaxModuleSize
	}
	if s.maxSpec <= 0 {
		s.maxSpec = DefaultMaxSpecSize
	}
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
		mux.Handle(rt.method+" "+rt.path, rt.handler)
		served = append(served, rt)
	}
	s.openapi = openAPI(served)
	mux.HandleFunc("GET /{$}", ui)
	mux.Handle("GET /ui/", uiAssets)

	return s.observe(authorize(cfg.Token, routeProblems(mux)))
}
