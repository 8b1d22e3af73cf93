package api

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"path"
	"strings"
)

// authorize requires "Authorization: Bearer <token>" on every /v1 request
// when token is set. Probes, metrics and the UI page stay open.
func authorize(token string, next http.Handler) http.Handler {
	if token == "" {
		return next
	}
	// Comparing digests keeps the comparison constant-time whatever the
	// presented token's length.
	want := sha256.Sum256([]byte(token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := path.Clean("/" + r.URL.Path)
		if p != "/v1" && !strings.HasPrefix(p, "/v1/") {
			next.ServeHTTP(w, r)
			return
		}
		scheme, presented, ok := strings.Cut(r.Header.Get("Authorization"), " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") {
			unauthorized(w, "missing bearer token: send Authorization: Bearer <token>")
			return
		}
		got := sha256.Sum256([]byte(strings.TrimSpace(presented)))
		if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
			unauthorized(w, "invalid bearer token")
			return
		}
		next.ServeHTTP(w, r)
	})
}

func unauthorized(w http.ResponseWriter, detail string) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="platform"`)
	writeProblem(w, unauthenticated.problem(detail))
}
