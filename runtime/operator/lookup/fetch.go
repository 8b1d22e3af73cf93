package lookup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/abi"
)

// Fetcher performs one lookup. A result's value is the caller's to keep.
// limit bounds the bytes of the value: a larger one is an error.
type Fetcher interface {
	Fetch(ctx context.Context, req *abi.LookupRequest, limit int) (abi.LookupResult, error)
}

// ErrRefused wraps a lookup that must not be tried again: a host not on
// the allow-list, a bucket that does not exist, a value over its limit.
var ErrRefused = errors.New("lookup refused")

// Fetchers serves both kinds of lookup: KV from JetStream, HTTP GETs to
// the hosts Allow accepts. Safe for concurrent use.
type Fetchers struct {
	JetStream jetstream.JetStream
	Client    *http.Client
	// Allow says whether HTTP lookups may call u's host.
	Allow func(u *url.URL) bool

	mu      sync.Mutex
	buckets map[string]jetstream.KeyValue
}

// Fetch performs req.
func (f *Fetchers) Fetch(ctx context.Context, req *abi.LookupRequest, limit int) (abi.LookupResult, error) {
	switch req.Kind {
	case abi.LookupKV:
		return f.kv(ctx, string(req.Target), string(req.Key), limit)
	case abi.LookupHTTP:
		return f.http(ctx, string(req.Target), limit)
	}
	return abi.LookupResult{}, fmt.Errorf("%w: %s", ErrRefused, req.Kind)
}

func (f *Fetchers) kv(ctx context.Context, bucket, key string, limit int) (abi.LookupResult, error) {
	kv, err := f.bucket(ctx, bucket)
	if err != nil {
		return abi.LookupResult{}, err
	}
	e, err := kv.Get(ctx, key)
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
		return abi.LookupResult{Status: abi.LookupAbsent}, nil
	case errors.Is(err, jetstream.ErrInvalidKey):
		return abi.LookupResult{}, fmt.Errorf("%w: kv bucket %q: invalid key %q", ErrRefused, bucket, key)
	case err != nil:
		return abi.LookupResult{}, fmt.Errorf("kv bucket %q key %q: %w", bucket, key, err)
	}
	if len(e.Value()) > limit {
		return abi.LookupResult{}, fmt.Errorf("%w: kv bucket %q key %q: value of %d bytes exceeds the lookup's share of max_bytes (%d)", ErrRefused, bucket, key, len(e.Value()), limit)
	}
	return abi.LookupResult{Status: abi.LookupFound, Value: e.Value()}, nil
}

// bucket opens a KV bucket once and keeps it.
func (f *Fetchers) bucket(ctx context.Context, name string) (jetstream.KeyValue, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if kv, ok := f.buckets[name]; ok {
		return kv, nil
	}
	if f.JetStream == nil {
		return nil, fmt.Errorf("%w: kv bucket %q: no JetStream", ErrRefused, name)
	}
	kv, err := f.JetStream.KeyValue(ctx, name)
	switch {
	case errors.Is(err, jetstream.ErrBucketNotFound):
		return nil, fmt.Errorf("%w: no kv bucket %q", ErrRefused, name)
	case err != nil:
		return nil, fmt.Errorf("kv bucket %q: %w", name, err)
	}
	if f.buckets == nil {
		f.buckets = map[string]jetstream.KeyValue{}
	}
	f.buckets[name] = kv
	return kv, nil
}

func (f *Fetchers) http(ctx context.Context, raw string, limit int) (abi.LookupResult, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return abi.LookupResult{}, fmt.Errorf("%w: %q is not an http or https URL", ErrRefused, raw)
	}
	if f.Allow == nil || !f.Allow(u) {
		return abi.LookupResult{}, fmt.Errorf("%w: http lookup to host %q: not on lookups.http.allow", ErrRefused, u.Host)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return abi.LookupResult{}, fmt.Errorf("%w: %v", ErrRefused, err)
	}
	resp, err := f.client().Do(req)
	if err != nil {
		return abi.LookupResult{}, err
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return abi.LookupResult{Status: abi.LookupAbsent}, nil
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return abi.LookupResult{}, fmt.Errorf("GET %s: status %d", u.Redacted(), resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(limit)+1))
	if err != nil {
		return abi.LookupResult{}, fmt.Errorf("GET %s: %w", u.Redacted(), err)
	}
	if len(body) > limit {
		return abi.LookupResult{}, fmt.Errorf("%w: GET %s: body exceeds the lookup's share of max_bytes (%d)", ErrRefused, u.Redacted(), limit)
	}
	return abi.LookupResult{Status: abi.LookupFound, Value: body}, nil
}

// client is the HTTP client, which follows a redirect only to an allowed
// host.
func (f *Fetchers) client() *http.Client {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.Client == nil {
		f.Client = &http.Client{CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 5 {
				return fmt.Errorf("%w: more than 5 redirects", ErrRefused)
			}
			if f.Allow == nil || !f.Allow(req.URL) {
				return fmt.Errorf("%w: redirect to host %q: not on lookups.http.allow", ErrRefused, req.URL.Host)
			}
			return nil
		}}
	}
	return f.Client
}
