package api

import (
	"context"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"time"

	"wasmstream.io/platform/runtime"
)

// Cluster is what the API needs of a cluster: its workers, and where
// requests about a job, or a new job, belong. Outside cluster mode nothing
// is forwarded and the list of workers is empty.
type Cluster interface {
	Workers(ctx context.Context) ([]runtime.WorkerInfo, error)
	// JobOwner is the HTTP address of the live worker, other than this
	// one, that runs job id.
	JobOwner(id string) (addr string, ok bool)
	// PlaceJob is the HTTP address of the worker, other than this one,
	// a new job should run on.
	PlaceJob() (addr string, ok bool)
}

// forwardedHeader marks a request one worker forwarded to another: it is
// answered where it arrives, never forwarded again, so that two workers
// that disagree about an owner cannot bounce a request between them.
const forwardedHeader = "Platform-Forwarded"

// forwarding wraps a route's handler in cluster mode: a request about a job
// another worker runs (any /v1/jobs/{id} route), or a new job that belongs
// on another worker, is passed to that worker, credentials and all, and its
// answer relayed.
func (s *server) forwarding(rt route, h http.Handler) http.Handler {
	if s.cluster == nil {
		return h
	}
	switch {
	case strings.HasPrefix(rt.path, "/v1/jobs/{id}"):
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get(forwardedHeader) == "" {
				if addr, ok := s.cluster.JobOwner(r.PathValue("id")); ok {
					var local http.Handler
					if r.Method == http.MethodGet {
						// A read the owner cannot answer (it just died)
						// is answered here, from the registry.
						local = h
					}
					s.forward(w, r, addr, local)
					return
				}
			}
			h.ServeHTTP(w, r)
		})
	case rt.op == "submitJob":
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get(forwardedHeader) == "" && !r.URL.Query().Has("dry_run") {
				if addr, ok := s.cluster.PlaceJob(); ok {
					s.forward(w, r, addr, nil)
					return
				}
			}
			h.ServeHTTP(w, r)
		})
	}
	return h
}

// Forwarding's transports: a worker that does not take the connection
// within forwardDialTimeout is taken for gone; a read whose answer has not
// begun within forwardReadTimeout (a paused worker, whose kernel still
// accepts connections) is answered by the fallback.
const (
	forwardDialTimeout = 2 * time.Second
	forwardReadTimeout = 3 * time.Second
)

var (
	forwardTransport = &http.Transport{
		DialContext:         (&net.Dialer{Timeout: forwardDialTimeout}).DialContext,
		MaxIdleConnsPerHost: 8, IdleConnTimeout: time.Minute,
	}
	forwardReadTransport = &http.Transport{
		DialContext:           (&net.Dialer{Timeout: forwardDialTimeout}).DialContext,
		ResponseHeaderTimeout: forwardReadTimeout,
		MaxIdleConnsPerHost:   8, IdleConnTimeout: time.Minute,
	}
)

// forward passes r to the worker at addr; when that worker does not answer,
// fallback (if any) answers instead.
func (s *server) forward(w http.ResponseWriter, r *http.Request, addr string, fallback http.Handler) {
	target, err := url.Parse(addr)
	if err != nil {
		writeProblem(w, workerUnreachable.problem("the worker's address "+addr+" does not parse: "+err.Error()))
		return
	}
	transport := forwardTransport
	if fallback != nil {
		transport = forwardReadTransport
	}
	proxy := &httputil.ReverseProxy{
		Transport: transport,
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Header.Set(forwardedHeader, "1")
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if fallback != nil {
				s.log.Debug("forwarding a read to a worker failed; answering here", "worker", addr, "path", r.URL.Path, "error", err)
				fallback.ServeHTTP(w, r)
				return
			}
			s.log.Warn("forwarding to a worker failed", "worker", addr, "path", r.URL.Path, "error", err)
			writeProblem(w, workerUnreachable.problem("the worker at "+addr+" did not answer: "+err.Error()))
		},
	}
	proxy.ServeHTTP(w, r)
}

// workers lists the cluster's workers.
func (s *server) workers(w http.ResponseWriter, r *http.Request) {
	out := []runtime.WorkerInfo{}
	if s.cluster != nil {
		ws, err := s.cluster.Workers(r.Context())
		if err != nil {
			s.fail(w, r, err)
			return
		}
		out = append(out, ws...)
	}
	s.writeJSON(w, r, http.StatusOK, struct {
		Workers []runtime.WorkerInfo `json:"workers"`
	}{out})
}
