package api

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"runtime/debug"
	"strconv"
	"sync"
	"time"
)

// Default bounds of requests.
const (
	DefaultMaxConcurrentUploads = 4
	DefaultUploadBytesInFlight  = 256 << 20
	DefaultReadTimeout          = 30 * time.Second
	DefaultUploadReadTimeout    = 2 * time.Minute
	DefaultRequestTimeout       = time.Minute
	DefaultUploadTimeout        = 5 * time.Minute
)

// uploadRoute is the route whose bodies are modules.
const uploadRoute = "POST /v1/modules"

// uploadRetryAfter is what a refused upload is told to wait.
const uploadRetryAfter = 2 * time.Second

// uploadLimiter bounds the module uploads in progress, in number and in the
// bytes their bodies hold.
type uploadLimiter struct {
	mu       sync.Mutex
	uploads  int
	bytes    int64
	maxCount int
	maxBytes int64
}

// acquire reserves one upload of up to n bytes. When the limits are reached
// it reserves nothing and says why.
func (l *uploadLimiter) acquire(n int64) (string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.uploads >= l.maxCount:
		return fmt.Sprintf("%d module uploads are in progress, the most the platform takes at once; retry later", l.uploads), false
	case l.bytes+n > l.maxBytes:
		return fmt.Sprintf("module uploads in progress hold %s of the %s the platform takes at once, and this one may need %s; retry later",
			byteSize(l.bytes), byteSize(l.maxBytes), byteSize(n)), false
	}
	l.uploads++
	l.bytes += n
	return "", true
}

// shrink gives back what an upload reserved beyond the n bytes it turned out
// to have.
func (l *uploadLimiter) shrink(reserved, n int64) {
	l.mu.Lock()
	l.bytes -= reserved - n
	l.mu.Unlock()
}

// release ends an upload that holds n bytes.
func (l *uploadLimiter) release(n int64) {
	l.mu.Lock()
	l.uploads--
	l.bytes -= n
	l.mu.Unlock()
}

// busy answers an upload the limiter refused.
func busy(w http.ResponseWriter, detail string) {
	w.Header().Set("Retry-After", strconv.Itoa(int(uploadRetryAfter/time.Second)))
	writeProblem(w, tooManyUploads.problem(detail))
}

// bodyDeadline bounds the time a request's body may take to arrive: the
// module upload route's read timeout for modules, the read timeout for the
// others. net/http lifts the deadline once the body has been read (it reads
// on for the next request without one), so a handler working longer than
// the deadline afterwards is not cut off.
func (s *server) bodyDeadline(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0 {
			d := s.readTimeout
			if routeOf(r.Context()) == uploadRoute {
				d = s.uploadReadTimeout
			}
			// A writer without a connection (a test's recorder) has no
			// deadline to set.
			_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(d))
		}
		next.ServeHTTP(w, r)
	})
}

// isTimeout says whether err is a read deadline passing.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// bodyTimedOut answers a request whose body did not arrive in time. The
// connection cannot serve another request: its read failed.
func bodyTimedOut(w http.ResponseWriter, what string) {
	w.Header().Set("Connection", "close")
	writeProblem(w, bodyTimeout.problem("the "+what+" did not arrive within the read timeout"))
}

// withTimeout gives every request a deadline, the upload timeout for module
// uploads and the request timeout for the others. The handler runs with it
// in its own goroutine, its response buffered; a handler still working at
// the deadline is answered 503 request-timeout, and what it writes later is
// dropped. Responses are small JSON documents, so buffering costs little.
func (s *server) withTimeout(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d := s.requestTimeout
		if routeOf(r.Context()) == uploadRoute {
			d = s.uploadTimeout
		}
		ctx, cancel := context.WithTimeout(context.WithValue(r.Context(), timeoutKey{}, d), d)
		defer cancel()
		r = r.WithContext(ctx)
		bw := &bufferedWriter{header: make(http.Header)}
		done := make(chan struct{})
		var panicked any
		go func() {
			defer close(done)
			defer func() {
				if v := recover(); v != nil {
					if v != http.ErrAbortHandler {
						v = handlerPanic{value: v, stack: debug.Stack()}
					}
					panicked = v
				}
			}()
			next.ServeHTTP(bw, r)
		}()
		// The deadline is waited for on its own timer: a context
		// cancelled early (the client went away, a body read failed)
		// lets the handler answer as it sees fit.
		timer := time.NewTimer(d)
		defer timer.Stop()
		select {
		case <-done:
			if panicked != nil {
				// What the handler wrote before it panicked goes out, as
				// it would have without the buffer: observe then aborts
				// the response rather than let it look complete.
				if bw.status != 0 {
					bw.copyTo(w)
				}
				panic(panicked)
			}
			bw.copyTo(w)
		case <-timer.C:
			bw.abandon()
			timedOut(w, r, context.DeadlineExceeded)
		}
	})
}

type timeoutKey struct{}

// timedOut answers a request whose context ended with err before the
// platform completed it.
func timedOut(w http.ResponseWriter, r *http.Request, err error) {
	detail := "the request was cancelled"
	if errors.Is(err, context.DeadlineExceeded) {
		d, _ := r.Context().Value(timeoutKey{}).(time.Duration)
		detail = "the request did not complete within its timeout of " + d.String()
	}
	writeProblem(w, requestTimeout.problem(detail))
}

// handlerPanic carries a handler's panic, and the stack of the goroutine it
// happened in, to the request's goroutine.
type handlerPanic struct {
	value any
	stack []byte
}

// bufferedWriter holds a response until the handler returns.
type bufferedWriter struct {
	mu        sync.Mutex
	header    http.Header
	status    int
	body      bytes.Buffer
	abandoned bool
}

func (b *bufferedWriter) Header() http.Header { return b.header }

func (b *bufferedWriter) WriteHeader(code int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.status == 0 && !b.abandoned {
		b.status = code
	}
}

func (b *bufferedWriter) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.abandoned {
		return 0, http.ErrHandlerTimeout
	}
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}

// abandon drops the response: the request timed out.
func (b *bufferedWriter) abandon() {
	b.mu.Lock()
	b.abandoned = true
	b.mu.Unlock()
}

// copyTo sends the buffered response; the handler has returned.
func (b *bufferedWriter) copyTo(w http.ResponseWriter) {
	dst := w.Header()
	for k, v := range b.header {
		dst[k] = v
	}
	status := b.status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	_, _ = w.Write(b.body.Bytes())
}
