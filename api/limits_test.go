package api

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime"
)

// TestSlowBodyIsCutOff sends a body one byte every 50 ms over a real TCP
// connection: the server answers 408 once the route's read timeout has
// passed and closes the connection, long before the body could be
// complete.
func TestSlowBodyIsCutOff(t *testing.T) {
	for _, tc := range []struct {
		name, target, contentType, what string
	}{
		{"job spec", "/v1/jobs", "application/json", "job spec"},
		{"module", "/v1/modules", "application/wasm", "module"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mods, jobs := fixtures()
			srv := httptest.NewServer(New(Config{Modules: mods, Jobs: jobs, Logger: testLogger(t),
				ReadTimeout: 300 * time.Millisecond, UploadReadTimeout: 300 * time.Millisecond}))
			defer srv.Close()
			conn, err := net.Dial("tcp", srv.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			// Nothing in this test may wait longer than this.
			if err := conn.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
				t.Fatal(err)
			}
			const length = 200 // at 20 bytes/s, 10 s: the deadline ends the test first
			if _, err := fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: test\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n",
				tc.target, tc.contentType, length); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			stop := make(chan struct{})
			sent := 0
			wg.Add(1)
			go func() {
				defer wg.Done()
				tick := time.NewTicker(50 * time.Millisecond)
				defer tick.Stop()
				for range length - 1 {
					select {
					case <-stop:
						return
					case <-tick.C:
					}
					if _, err := conn.Write([]byte("x")); err != nil {
						return
					}
					sent++
				}
			}()
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			close(stop)
			if err != nil {
				wg.Wait()
				t.Fatalf("no response: %v", err)
			}
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatalf("read the response: %v", err)
			}
			// The server closed the connection: the read ends (EOF or a
			// reset), not at the test's deadline.
			rest, err := io.ReadAll(conn)
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Fatalf("connection still open after the answer (read %q)", rest)
			}
			wg.Wait()
			if sent >= length-1 {
				t.Fatalf("the whole body went out (%d bytes) before the answer", sent)
			}
			if resp.StatusCode != http.StatusRequestTimeout || resp.Header.Get("Content-Type") != problemType || !resp.Close {
				t.Errorf("status %d, Content-Type %q, close %v; want 408, %s, true", resp.StatusCode, resp.Header.Get("Content-Type"), resp.Close, problemType)
			}
			want := `{"type":"about:blank","title":"Request Timeout","status":408,"detail":"the ` + tc.what + ` did not arrive within the read timeout"}` + "\n"
			if string(body) != want {
				t.Errorf("body %s, want %s", body, want)
			}
			if len(jobs.submitted) != 0 || len(mods.uploaded) != 0 {
				t.Errorf("submitted %d jobs and uploaded %d modules, want none", len(jobs.submitted), len(mods.uploaded))
			}
		})
	}
}

// slowJobs takes its time to submit, and records whether the request's
// context was still alive when it was done.
type slowJobs struct {
	*fakeJobs
	delay   time.Duration
	ctxErrs []error
}

func (s *slowJobs) SubmitJob(ctx context.Context, spec []byte) (runtime.JobInfo, error) {
	time.Sleep(s.delay)
	s.ctxErrs = append(s.ctxErrs, ctx.Err())
	return s.fakeJobs.SubmitJob(ctx, spec)
}

// TestReadTimeoutEndsWithTheBody: a handler working longer than the read
// timeout after the body has arrived completes, its context intact.
func TestReadTimeoutEndsWithTheBody(t *testing.T) {
	mods, fj := fixtures()
	jobs := &slowJobs{fakeJobs: fj, delay: 400 * time.Millisecond}
	srv := httptest.NewServer(New(Config{Modules: mods, Jobs: jobs, Logger: testLogger(t), ReadTimeout: 100 * time.Millisecond}))
	defer srv.Close()
	for range 2 { // the second request reuses the connection
		resp, err := srv.Client().Post(srv.URL+"/v1/jobs", "application/json", strings.NewReader(`{"name":"demo"}`))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("status %d, want 201", resp.StatusCode)
		}
	}
	if len(jobs.ctxErrs) != 2 || jobs.ctxErrs[0] != nil || jobs.ctxErrs[1] != nil {
		t.Fatalf("contexts ended %v, want two live ones", jobs.ctxErrs)
	}
}

// gateModules holds every upload until the test opens the gate.
type gateModules struct {
	*fakeModules
	mu      sync.Mutex
	entered chan int
	gate    chan struct{}
}

func (g *gateModules) UploadModule(ctx context.Context, wasm []byte) (runtime.ModuleInfo, error) {
	g.entered <- len(wasm)
	<-g.gate
	g.mu.Lock()
	defer g.mu.Unlock()
	return runtime.ModuleInfo{ID: fmt.Sprintf("sha256:%x", wasm), Size: len(wasm),
		Functions: []abi.Function{{Name: "parse", Kind: abi.KindMap}}, Uploaded: t0}, nil
}

type upload struct {
	status     int
	retryAfter string
	body       string
}

func postModule(t *testing.T, srv *httptest.Server, body io.Reader) upload {
	req, err := http.NewRequest("POST", srv.URL+"/v1/modules", body)
	if err != nil {
		t.Error(err)
		return upload{}
	}
	req.Header.Set("Content-Type", "application/wasm")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Error(err)
		return upload{}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return upload{resp.StatusCode, resp.Header.Get("Retry-After"), string(b)}
}

// TestConcurrentUploadsAreBounded: with the limit at N, N+1 concurrent
// uploads give N accepted and exactly one 503 with Retry-After; once they
// are done, the next upload is taken again.
func TestConcurrentUploadsAreBounded(t *testing.T) {
	const n = 3
	mods, jobs := fixtures()
	g := &gateModules{fakeModules: mods, entered: make(chan int, n+1), gate: make(chan struct{})}
	srv := httptest.NewServer(New(Config{Modules: g, Jobs: jobs, Logger: testLogger(t), MaxConcurrentUploads: n}))
	defer srv.Close()

	results := make(chan upload, n+1)
	for i := range n + 1 {
		go func() { results <- postModule(t, srv, strings.NewReader(wasm8+string(rune('a'+i)))) }()
	}
	timeout := time.After(10 * time.Second)
	var refused []upload
	for entered := 0; entered < n || len(refused) < 1; {
		select {
		case <-g.entered:
			entered++
		case u := <-results:
			refused = append(refused, u)
		case <-timeout:
			t.Fatalf("after 10 s: %d uploads in progress, %d answered", entered, len(refused))
		}
	}
	want := upload{503, "2", `{"type":"https://wasmstream.io/problems/too-many-uploads","title":"Too many uploads","status":503,` +
		`"detail":"3 module uploads are in progress, the most the platform takes at once; retry later"}` + "\n"}
	if len(refused) != 1 || refused[0] != want {
		t.Fatalf("answered before the gate opened: %+v, want exactly %+v", refused, want)
	}
	close(g.gate)
	for range n {
		if u := <-results; u.status != http.StatusCreated {
			t.Errorf("upload answered %+v, want 201", u)
		}
	}
	go func() { <-g.entered }()
	if u := postModule(t, srv, strings.NewReader(wasm8)); u.status != http.StatusCreated {
		t.Errorf("upload after the others answered %+v, want 201", u)
	}
}

// TestUploadBytesInFlightAreBounded: uploads hold their Content-Length
// (the module limit without one) until answered; one that does not fit is
// refused with Retry-After, and a module larger than the whole budget is
// too large.
func TestUploadBytesInFlightAreBounded(t *testing.T) {
	mods, jobs := fixtures()
	g := &gateModules{fakeModules: mods, entered: make(chan int, 4), gate: make(chan struct{})}
	srv := httptest.NewServer(New(Config{Modules: g, Jobs: jobs, Logger: testLogger(t), UploadBytesInFlight: 100}))
	defer srv.Close()

	first := make(chan upload, 1)
	go func() { first <- postModule(t, srv, strings.NewReader(strings.Repeat("a", 60))) }()
	if got := <-g.entered; got != 60 {
		t.Fatalf("first upload has %d bytes, want 60", got)
	}
	refused := func(need string) upload {
		return upload{503, "2", `{"type":"https://wasmstream.io/problems/too-many-uploads","title":"Too many uploads","status":503,` +
			`"detail":"module uploads in progress hold 60 bytes of the 100 bytes the platform takes at once, and this one may need ` + need + `; retry later"}` + "\n"}
	}
	if u := postModule(t, srv, strings.NewReader(strings.Repeat("b", 41))); u != refused("41 bytes") {
		t.Errorf("41 more bytes: %+v, want %+v", u, refused("41 bytes"))
	}
	// Without Content-Length an upload may be as large as the limit.
	if u := postModule(t, srv, io.MultiReader(strings.NewReader("c"))); u != refused("100 bytes") {
		t.Errorf("unknown length: %+v, want %+v", u, refused("100 bytes"))
	}
	tooBig := upload{413, "", `{"type":"about:blank","title":"Request Entity Too Large","status":413,"detail":"module exceeds the limit of 100 bytes","limit":100}` + "\n"}
	if u := postModule(t, srv, strings.NewReader(strings.Repeat("d", 101))); u != tooBig {
		t.Errorf("101 bytes: %+v, want %+v", u, tooBig)
	}
	second := make(chan upload, 1)
	go func() { second <- postModule(t, srv, strings.NewReader(strings.Repeat("e", 40))) }()
	if got := <-g.entered; got != 40 {
		t.Fatalf("second upload has %d bytes, want 40", got)
	}
	close(g.gate)
	for _, c := range []chan upload{first, second} {
		if u := <-c; u.status != http.StatusCreated {
			t.Errorf("upload answered %+v, want 201", u)
		}
	}
	go func() { <-g.entered }()
	if u := postModule(t, srv, strings.NewReader(strings.Repeat("f", 100))); u.status != http.StatusCreated {
		t.Errorf("100 bytes once the others are done: %+v, want 201", u)
	}
}

// stuckJobs never lists: ignoring its context, or ending with it.
type stuckJobs struct {
	*fakeJobs
	honourCtx bool
	release   chan struct{}
}

func (s *stuckJobs) ListJobs(ctx context.Context) ([]runtime.JobInfo, error) {
	if s.honourCtx {
		<-ctx.Done()
		return nil, fmt.Errorf("list jobs: %w", ctx.Err())
	}
	<-s.release
	return nil, nil
}

// TestRequestTimeout: a handler still working at the request's deadline is
// answered 503 request-timeout, whether or not it heeds its context.
func TestRequestTimeout(t *testing.T) {
	for _, tc := range []struct {
		name      string
		honourCtx bool
		detail    string
	}{
		{"handler ignores its context", false, "the request did not complete within its timeout of 200ms"},
		{"handler ends with its context", true, "the request did not complete within its timeout of 200ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mods, fj := fixtures()
			jobs := &stuckJobs{fakeJobs: fj, honourCtx: tc.honourCtx, release: make(chan struct{})}
			defer close(jobs.release)
			h := New(Config{Modules: mods, Jobs: jobs, Logger: testLogger(t), RequestTimeout: 200 * time.Millisecond})
			start := time.Now()
			rec := request{method: "GET", target: "/v1/jobs"}.do(h)
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("answered after %v", d)
			}
			response{status: 503, header: map[string]string{"Content-Type": problemType},
				body: `{"type":"https://wasmstream.io/problems/request-timeout","title":"Request timed out","status":503,"detail":"` + tc.detail + `"}`}.check(t, rec)
		})
	}
}
