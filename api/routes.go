package api

import "net/http"

// routeProblems answers requests no route matches, and methods a route does
// not allow, with problem details instead of the mux's plain text.
func routeProblems(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h, pattern := mux.Handler(r); pattern == "" {
			h.ServeHTTP(&routeMiss{ResponseWriter: w, r: r}, r)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// routeMiss replaces the mux's 404 and 405 responses; anything else the mux
// answers without a route (a redirect to the cleaned path) passes through.
type routeMiss struct {
	http.ResponseWriter
	r        *http.Request
	replaced bool
}

func (m *routeMiss) WriteHeader(code int) {
	switch code {
	case http.StatusNotFound:
		m.replaced = true
		writeProblem(m.ResponseWriter, noRoute.problem("no route for "+m.r.Method+" "+m.r.URL.Path))
	case http.StatusMethodNotAllowed:
		m.replaced = true
		writeProblem(m.ResponseWriter, methodNotAllowed.problem(m.r.Method+" is not allowed on "+m.r.URL.Path+
			"; allowed: "+m.Header().Get("Allow")))
	default:
		m.ResponseWriter.WriteHeader(code)
	}
}

func (m *routeMiss) Write(b []byte) (int, error) {
	if m.replaced {
		return len(b), nil
	}
	return m.ResponseWriter.Write(b)
}
