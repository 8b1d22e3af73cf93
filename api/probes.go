package api

import "net/http"

var statusOK = []byte(`{"status":"ok"}` + "\n")

// healthz answers while the process can serve HTTP at all.
func healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(statusOK)
}

// readyz answers 200 once Ready passes, and 503 with its reason before.
func (s *server) readyz(w http.ResponseWriter, r *http.Request) {
	if s.ready != nil {
		if err := s.ready(); err != nil {
			writeProblem(w, notReady.problem("not ready: "+err.Error()))
			return
		}
	}
	healthz(w, r)
}
