package api

import (
	"net/http/httptest"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func TestMetricsHandler(t *testing.T) {
	extra := prometheus.NewCounter(prometheus.CounterOpts{Name: "platform_test_total", Help: "A collector passed in."})
	extra.Add(3)
	rec := httptest.NewRecorder()
	MetricsHandler("1.2.3", extra).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("status = %d, want 200", rec.Code)
	}
	body := rec.Body.String()
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^platform_build_info\{go_version="` + regexp.QuoteMeta(runtime.Version()) + `",revision="[^"]+",version="1\.2\.3"\} 1$`),
		regexp.MustCompile(`(?m)^platform_test_total 3$`),
		regexp.MustCompile(`(?m)^go_goroutines \d+$`),
		regexp.MustCompile(`(?m)^process_resident_memory_bytes \S+$`),
		regexp.MustCompile(`(?m)^promhttp_metric_handler_requests_total\{code="200"\} 0$`),
	} {
		if !want.MatchString(body) {
			t.Errorf("no line matches %s in\n%s", want, firstLines(body, 20))
		}
	}
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "\n")
}
