package spec

import (
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
)

// Lookups says what the job's async lookups may reach.
type Lookups struct {
	HTTP *HTTPLookups `json:"http,omitempty"`
}

// HTTPLookups lists the hosts HTTP lookups may call.
type HTTPLookups struct {
	// Allow lists hosts ("api.example.com") or host:port pairs
	// ("127.0.0.1:8080"); a lookup to any other host fails its record.
	Allow []string `json:"allow,omitempty"`
}

// AsyncLookup is an operator that looks records up in NATS KV buckets or
// over HTTP without waiting for each lookup in turn (Flink's Async I/O).
// Exactly one of Request, Bucket and URL says what each record looks up;
// Function, a lookup_result function, gets the record with its results.
type AsyncLookup struct {
	Module string `json:"module" required:"true"`
	// Request is a lookup_request function of Module that asks for each
	// record's lookups.
	Request string `json:"request,omitempty"`
	// Bucket: each record's key is looked up in this KV bucket.
	Bucket string `json:"bucket,omitempty"`
	// URL: an HTTP GET of this URL with "{key}" replaced by the record's
	// key, escaped as a path segment.
	URL      string `json:"url,omitempty"`
	Function string `json:"function" required:"true"`
	// Capacity is the most records whose lookups are in flight at once.
	Capacity int `json:"capacity" default:"100"`
	// MaxBytes bounds the bytes of the records in flight and of their
	// results.
	MaxBytes int64 `json:"max_bytes" default:"16777216"`
	// Timeout bounds one attempt of one lookup.
	Timeout Duration `json:"timeout" default:"5s"`
	// Retries is how many times a lookup that timed out or failed is tried
	// again before its record fails under on_udf_error.
	Retries int `json:"retries,omitzero"`
	// Output is ordered (results leave in input order) or unordered (as
	// they complete, never past a watermark that followed their input).
	Output string `json:"output" default:"ordered"`
}

// Async lookup output modes.
const (
	LookupOrdered   = "ordered"
	LookupUnordered = "unordered"
)

var lookupOutputs = []string{LookupOrdered, LookupUnordered}

// Bounds of an async lookup.
const (
	maxLookupCapacity = 1 << 16
	minLookupBytes    = 64 << 10
)

// KeyPlaceholder is what an async lookup's URL template has in place of the
// record's key.
const KeyPlaceholder = "{key}"

func (v *validator) asyncLookup(p string, a *AsyncLookup) {
	v.function(p, a.Module, a.Function)
	switch countSet(a.Request != "", a.Bucket != "", a.URL != "") {
	case 0:
		v.fail(p, "set request (a lookup_request function), bucket or url")
	case 1:
	default:
		v.fail(p, "set only one of request, bucket and url")
	}
	if a.Bucket != "" {
		v.bucket(p+".bucket", a.Bucket)
	}
	if a.URL != "" {
		v.lookupURL(p+".url", strings.ReplaceAll(a.URL, KeyPlaceholder, "k"))
	}
	v.between(p+".capacity", int64(a.Capacity), 1, maxLookupCapacity)
	if a.MaxBytes < minLookupBytes {
		v.fail(p+".max_bytes", "must be at least %d, got %d", minLookupBytes, a.MaxBytes)
	}
	v.positive(p+".timeout", a.Timeout)
	v.between(p+".retries", int64(a.Retries), 0, 100)
	v.oneOf(p+".output", a.Output, lookupOutputs...)
}

// lookupURL checks a URL the spec gives: http or https, and a host on
// lookups.http.allow.
func (v *validator) lookupURL(path, raw string) {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		v.fail(path, "not a URL: %v", err)
		return
	case u.Scheme != "http" && u.Scheme != "https":
		v.fail(path, "want an http or https URL, got %q", raw)
		return
	case u.Host == "":
		v.fail(path, "the URL has no host: %q", raw)
		return
	}
	if !v.job.Lookups.AllowsHost(u) {
		v.fail(path, "host %q is not on lookups.http.allow", u.Host)
	}
}

// AllowsHost reports whether HTTP lookups may call u's host: its host or its
// host:port is on lookups.http.allow.
func (l *Lookups) AllowsHost(u *url.URL) bool {
	if l == nil || l.HTTP == nil {
		return false
	}
	return slices.Contains(l.HTTP.Allow, u.Host) || slices.Contains(l.HTTP.Allow, u.Hostname())
}

func (v *validator) lookups() {
	l := v.job.Lookups
	if l == nil || l.HTTP == nil {
		return
	}
	for i, h := range l.HTTP.Allow {
		if msg := hostProblem(h); msg != "" {
			v.fail(fmt.Sprintf("lookups.http.allow[%d]", i), "%s", msg)
		}
	}
}

// hostProblem says what is wrong with an allow-list entry, or "".
func hostProblem(h string) string {
	if h == "" {
		return "empty host"
	}
	if strings.ContainsAny(h, "/?#@ ") {
		return fmt.Sprintf("want a host or host:port, not a URL: %q", h)
	}
	if host, port, err := net.SplitHostPort(h); err == nil {
		if host == "" || port == "" {
			return fmt.Sprintf("want a host or host:port, got %q", h)
		}
	}
	return ""
}
