package api

import (
	"context"
	"crypto/rand"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"
)

type requestIDKey struct{}

func requestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// observe gives each request an id (the X-Request-Id response header), logs
// it when it ends, and turns a panic into a 500.
func (s *server) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := rand.Text()
		w.Header().Set("X-Request-Id", id)
		w.Header().Set("X-Content-Type-Options", "nosniff")
		r = r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id))
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			v := recover()
			if v == http.ErrAbortHandler {
				panic(v)
			}
			if v != nil {
				stack := debug.Stack()
				if hp, ok := v.(handlerPanic); ok {
					v, stack = hp.value, hp.stack
				}
				if sw.status != 0 {
					// Part of the response is out: abort it rather than
					// let it look complete.
					s.log.ErrorContext(r.Context(), "panic after the response began",
						"request_id", id, "panic", v, "stack", string(stack))
					panic(http.ErrAbortHandler)
				}
				s.internal(sw, r, "panic", v, "stack", string(stack))
			}
			s.log.Log(r.Context(), accessLevel(r.Method, sw.status), "request", "request_id", id,
				"method", r.Method, "path", r.URL.Path, "status", sw.status,
				"duration", time.Since(start))
		}()
		next.ServeHTTP(sw, r)
	})
}

// accessLevel is the level of a request's log line: DEBUG for a read that
// succeeded (polls of jobs and metrics would drown the rest), INFO for
// everything else.
func accessLevel(method string, status int) slog.Level {
	if (method == http.MethodGet || method == http.MethodHead) && status < 400 {
		return slog.LevelDebug
	}
	return slog.LevelInfo
}

// statusWriter remembers the status of the response.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
