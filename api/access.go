package api

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"
)

// Scope is what a token allows. Each scope includes the ones below it.
type Scope int

// The scopes.
const (
	// ScopeRead allows the GET (and HEAD) requests under /v1.
	ScopeRead Scope = iota + 1
	// ScopeSubmit also allows uploading modules and submitting, cancelling,
	// stopping and savepointing jobs.
	ScopeSubmit
	// ScopeAdmin allows everything, deletes included.
	ScopeAdmin
)

var scopeNames = map[Scope]string{ScopeRead: "read", ScopeSubmit: "submit", ScopeAdmin: "admin"}

func (s Scope) String() string {
	if n, ok := scopeNames[s]; ok {
		return n
	}
	return fmt.Sprintf("Scope(%d)", int(s))
}

// ParseScope reads a scope's name: read, submit or admin.
func ParseScope(name string) (Scope, error) {
	for s, n := range scopeNames {
		if n == name {
			return s, nil
		}
	}
	return 0, fmt.Errorf("scope %q is not read, submit or admin", name)
}

// Token is a bearer token the API accepts.
type Token struct {
	// Name is who the audit log says acted with the token; empty means
	// the token's scope. The secret itself is never logged.
	Name   string
	Secret string
	Scope  Scope
}

// who names the token in the audit log.
func (t Token) who() string {
	if t.Name != "" {
		return t.Name
	}
	return t.Scope.String()
}

// ValidateTokens checks a token list: every token has a secret and a scope,
// and no secret appears twice. Errors name a token by its Name, or by its
// place in the list.
func ValidateTokens(tokens []Token) error {
	seen := map[string]bool{}
	for i, t := range tokens {
		name := t.Name
		if name == "" {
			name = fmt.Sprintf("#%d", i)
		}
		switch {
		case t.Secret == "":
			return fmt.Errorf("token %s: empty token", name)
		case scopeNames[t.Scope] == "":
			return fmt.Errorf("token %s: no scope", name)
		case seen[t.Secret]:
			return fmt.Errorf("token %s: the same token as an earlier one", name)
		}
		seen[t.Secret] = true
	}
	return nil
}

// tokenDigest is a token as the API keeps it: its SHA-256, which keeps the
// comparison constant-time whatever the presented token's length.
type tokenDigest struct {
	digest [sha256.Size]byte
	token  Token
}

// authenticator finds the token a request presents.
type authenticator struct {
	tokens []tokenDigest
}

func newAuthenticator(tokens []Token) *authenticator {
	a := &authenticator{}
	for _, t := range tokens {
		a.tokens = append(a.tokens, tokenDigest{digest: sha256.Sum256([]byte(t.Secret)), token: t})
	}
	return a
}

// identify returns the token a presented secret matches. It compares with
// every token, so that how long it takes says nothing about which matched.
func (a *authenticator) identify(presented string) (Token, bool) {
	got := sha256.Sum256([]byte(presented))
	var found Token
	ok := false
	for _, t := range a.tokens {
		if subtle.ConstantTimeCompare(got[:], t.digest[:]) == 1 {
			found, ok = t.token, true
		}
	}
	return found, ok
}

// isV1 says whether a request is under /v1, the part of the API tokens
// protect.
func isV1(r *http.Request) bool {
	p := path.Clean("/" + r.URL.Path)
	return p == "/v1" || strings.HasPrefix(p, "/v1/")
}

// isMutation says whether a request can change something.
func isMutation(r *http.Request) bool {
	return r.Method != http.MethodGet && r.Method != http.MethodHead
}

// submitRoutes are the mutations a submit token may make; any other
// mutation needs an admin token.
var submitRoutes = map[string]bool{
	"POST /v1/modules":              true,
	"POST /v1/jobs":                 true,
	"POST /v1/jobs/{id}/cancel":     true,
	"POST /v1/jobs/{id}/savepoints": true,
	"POST /v1/jobs/{id}/stop":       true,
}

// requiredScope is the scope a request needs.
func requiredScope(r *http.Request) Scope {
	switch {
	case !isMutation(r):
		return ScopeRead
	case submitRoutes[routeOf(r.Context())]:
		return ScopeSubmit
	}
	return ScopeAdmin
}

// guard protects /v1: with tokens configured, a request must carry one
// ("Authorization: Bearer <token>") whose scope covers it, and every
// mutation is written to the audit log, whether it was allowed or not.
// Probes, metrics and the UI stay open.
func (s *server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isV1(r) {
			next.ServeHTTP(w, r)
			return
		}
		who, scope := "anonymous", ScopeAdmin
		if isMutation(r) {
			sw := &statusWriter{ResponseWriter: w}
			w = sw
			start := time.Now()
			defer func() { s.audit(r, sw, who, scope, start) }()
		}
		if len(s.auth.tokens) > 0 {
			scheme, presented, ok := strings.Cut(r.Header.Get("Authorization"), " ")
			if !ok || !strings.EqualFold(scheme, "Bearer") {
				who, scope = "unauthenticated", 0
				unauthorized(w, "missing bearer token: send Authorization: Bearer <token>")
				return
			}
			t, ok := s.auth.identify(strings.TrimSpace(presented))
			if !ok {
				who, scope = "unauthenticated", 0
				unauthorized(w, "invalid bearer token")
				return
			}
			who, scope = t.who(), t.Scope
		}
		if need := requiredScope(r); scope < need {
			writeProblem(w, insufficientScope.problem(fmt.Sprintf(
				"%s %s needs a token of scope %s; this one has scope %s", r.Method, r.URL.Path, need, scope)))
			return
		}
		next.ServeHTTP(w, r)
	})
}

func unauthorized(w http.ResponseWriter, detail string) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="platform"`)
	writeProblem(w, unauthenticated.problem(detail))
}

// audit writes the audit line of a mutation: who (a token's name or scope,
// never the token), what (method, route and the module or job it touched),
// when (the line's time, and how long it took) and the outcome (status).
func (s *server) audit(r *http.Request, sw *statusWriter, who string, scope Scope, start time.Time) {
	route := routeOf(r.Context())
	if _, p, ok := strings.Cut(route, " "); ok {
		route = p
	} else {
		route = path.Clean("/" + r.URL.Path)
	}
	attrs := []any{"request_id", requestID(r.Context()), "who", who}
	if scope != 0 {
		attrs = append(attrs, "scope", scope.String())
	}
	attrs = append(attrs, "method", r.Method, "route", route)
	id := pathParam(route, r.URL.EscapedPath(), "{id}")
	if id == "" {
		// A creation names what it created in Location.
		id = createdID(sw.Header().Get("Location"), route)
	}
	if id != "" {
		if strings.HasPrefix(route, "/v1/modules") {
			attrs = append(attrs, "module", id)
		} else {
			attrs = append(attrs, "job", id)
		}
	}
	if sp := r.URL.Query().Get("from_savepoint"); sp != "" && route == "/v1/jobs" {
		attrs = append(attrs, "savepoint", sp)
	}
	if sp := pathParam(route, r.URL.EscapedPath(), "{savepoint}"); sp != "" {
		attrs = append(attrs, "savepoint", sp)
	}
	status := sw.status
	if status == 0 {
		status = http.StatusOK
	}
	attrs = append(attrs, "status", status, "duration", time.Since(start))
	s.log.InfoContext(context.WithoutCancel(r.Context()), "audit", attrs...)
}

// pathParam is the segment of an escaped path that a route's wildcard
// ("{id}") stands for.
func pathParam(route, escaped, wildcard string) string {
	want := strings.Split(route, "/")
	got := strings.Split(escaped, "/")
	if len(want) != len(got) {
		return ""
	}
	for i, seg := range want {
		if seg == wildcard {
			id, err := url.PathUnescape(got[i])
			if err != nil {
				return ""
			}
			return id
		}
	}
	return ""
}

// createdID is the id in a Location header route+"/<id>".
func createdID(location, route string) string {
	rest, ok := strings.CutPrefix(location, route+"/")
	if !ok || rest == "" || strings.Contains(rest, "/") {
		return ""
	}
	id, err := url.PathUnescape(rest)
	if err != nil {
		return ""
	}
	return id
}

type routeKey struct{}

// routeOf is the pattern of the route a request goes to ("POST /v1/jobs"),
// or "" when none matches.
func routeOf(ctx context.Context) string {
	p, _ := ctx.Value(routeKey{}).(string)
	return p
}

// withRoute finds the request's route once, for the deadlines, scopes and
// audit that depend on it.
func withRoute(mux *http.ServeMux, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, pattern := mux.Handler(r)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), routeKey{}, pattern)))
	})
}
