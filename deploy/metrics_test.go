package deploy

import (
	"encoding/json"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestDeployPrometheus checks that every scrape target is a compose service
// on a port it serves, at a route of the platform, and that every platform
// worker is scraped.
func TestDeployPrometheus(t *testing.T) {
	c := loadCompose(t)
	rs := routes(t)
	cfg := docs(t, "prometheus.yml")[0]
	jobs := list(cfg, "scrape_configs")
	if len(jobs) == 0 {
		t.Fatal("prometheus.yml has no scrape_configs")
	}
	var targets []string
	for _, j := range jobs {
		path := str(j, "metrics_path")
		if path == "" {
			path = "/metrics"
		}
		if !slices.Contains(rs, path) {
			t.Errorf("job %s scrapes %s, which is no route of the platform", str(j, "job_name"), path)
		}
		for _, sc := range list(j, "static_configs") {
			for _, target := range stringList(t, "targets", mapping(sc)["targets"]) {
				host, port, err := net.SplitHostPort(target)
				if err != nil {
					t.Errorf("target %q: %v", target, err)
					continue
				}
				s, ok := c.Services[host]
				if !ok {
					t.Errorf("target %s is no compose service", target)
					continue
				}
				if listen := serviceHTTPPort(s); port != listen {
					t.Errorf("target %s: the service serves HTTP on %q", target, listen)
				}
				targets = append(targets, target)
			}
		}
	}
	var want []string
	for _, w := range c.workers() {
		want = append(want, w+":"+serviceHTTPPort(c.Services[w]))
	}
	slices.Sort(targets)
	if len(want) == 0 || !slices.Equal(targets, want) {
		t.Errorf("targets %q, want every platform worker: %q", targets, want)
	}
}

// serviceHTTPPort is the port a platform service's API listens on: from
// PLATFORM_HTTP_ADDR, else the image's (deploy/Dockerfile).
func serviceHTTPPort(s service) string {
	addr, _ := s.Environment["PLATFORM_HTTP_ADDR"].(string)
	if addr == "" {
		addr = "0.0.0.0:8080"
		if m := regexp.MustCompile(`PLATFORM_HTTP_ADDR=(\S+)`).FindStringSubmatch(string(mustRead("Dockerfile"))); m != nil {
			addr = m[1]
		}
	}
	_, port, _ := net.SplitHostPort(addr)
	return port
}

func mustRead(name string) []byte {
	b, _ := os.ReadFile(name)
	return b
}

// registeredMetrics are the metric names the platform registers, found in
// the source of the runtime packages (runtime/... ) and api: prometheus.NewDesc and
// Name: in collector options, with the _bucket, _sum and _count series of
// histograms.
func registeredMetrics(t *testing.T) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	descRE := regexp.MustCompile(`(\w+)\s*=\s*prometheus\.NewDesc\(\s*"([a-z_:]+)"`)
	nameRE := regexp.MustCompile(`Name:\s*"(platform_[a-z_:]+)"`)
	histRE := regexp.MustCompile(`NewConstHistogram\((\w+)`)
	var files []string
	for _, dir := range []string{"runtime", "api"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(path, ".go") {
				files = append(files, path)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src := readFile(t, f)
		descs := map[string]string{}
		for _, m := range descRE.FindAllSubmatch(src, -1) {
			descs[string(m[1])] = string(m[2])
			names[string(m[2])] = true
		}
		for _, m := range nameRE.FindAllSubmatch(src, -1) {
			names[string(m[1])] = true
		}
		for _, m := range histRE.FindAllSubmatch(src, -1) {
			if n := descs[string(m[1])]; n != "" {
				for _, suffix := range []string{"_bucket", "_sum", "_count"} {
					names[n+suffix] = true
				}
			}
		}
	}
	for _, want := range []string{"platform_jobs", "platform_build_info", "platform_vertex_records_in_total", "platform_udf_call_duration_seconds_bucket"} {
		if !names[want] {
			t.Fatalf("found no registration of %s in the source (found %d names)", want, len(names))
		}
	}
	return names
}

// promqlMetrics are the metric names a PromQL expression selects.
func promqlMetrics(expr string) []string {
	for _, re := range []string{`"(?:[^"\\]|\\.)*"`, `\{[^}]*\}`, `\[[^\]]*\]`, `\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`} {
		expr = regexp.MustCompile(re).ReplaceAllString(expr, " ")
	}
	keywords := map[string]bool{"and": true, "or": true, "unless": true, "bool": true, "offset": true, "e": true, "inf": true, "nan": true}
	var out []string
	for _, m := range regexp.MustCompile(`([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?`).FindAllStringSubmatch(expr, -1) {
		if m[2] != "" || keywords[strings.ToLower(m[1])] {
			continue // a function or an aggregation
		}
		out = append(out, m[1])
	}
	return out
}

func TestDeployPromQLMetrics(t *testing.T) {
	tests := map[string][]string{
		`up{job="platform"}`: {"up"},
		`histogram_quantile(0.99, sum by (le, job_id) (rate(platform_udf_call_duration_seconds_bucket{job_id="x"}[5m])))`: {"platform_udf_call_duration_seconds_bucket"},
		`sum(rate(a_total[1m])) / sum without (x) (b) * 1000 and on(job_id) c`:                                            {"a_total", "b", "c"},
	}
	for expr, want := range tests {
		if got := promqlMetrics(expr); !slices.Equal(got, want) {
			t.Errorf("promqlMetrics(%q) = %q, want %q", expr, got, want)
		}
	}
}

// TestDeployGrafana checks the provisioned data source and dashboard
// provider against compose.yaml, and that every metric the dashboard
// queries is one the platform registers (or Prometheus's up).
func TestDeployGrafana(t *testing.T) {
	c := loadCompose(t)
	g := c.Services["grafana"]
	mounts := map[string]string{}
	for _, v := range g.Volumes {
		parts := strings.Split(v, ":")
		mounts[parts[0]] = parts[1]
	}
	if mounts["./grafana/provisioning"] != "/etc/grafana/provisioning" {
		t.Fatalf("grafana mounts %v, want ./grafana/provisioning on /etc/grafana/provisioning", mounts)
	}
	ds := list(docs(t, "grafana/provisioning/datasources/prometheus.yaml")[0], "datasources")
	if len(ds) != 1 || str(ds[0], "type") != "prometheus" || str(ds[0], "uid") == "" {
		t.Fatalf("datasources %v", ds)
	}
	u := strings.TrimPrefix(str(ds[0], "url"), "http://")
	host, port, _ := net.SplitHostPort(u)
	if _, ok := c.Services[host]; !ok || port != "9090" || !slices.Contains(c.Services[host].Ports, "127.0.0.1:9090:9090") {
		t.Errorf("data source url %s is not the prometheus service", str(ds[0], "url"))
	}
	providers := list(docs(t, "grafana/provisioning/dashboards/platform.yaml")[0], "providers")
	if len(providers) != 1 || mounts["./grafana/dashboards"] == "" || str(providers[0], "options", "path") != mounts["./grafana/dashboards"] {
		t.Fatalf("dashboard provider %v does not read the mounted ./grafana/dashboards (%v)", providers, mounts)
	}
	if home := g.Environment["GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"]; home != mounts["./grafana/dashboards"]+"/platform.json" {
		t.Errorf("home dashboard %v", home)
	}

	registered := registeredMetrics(t)
	var dash map[string]any
	if err := json.Unmarshal(readFile(t, "grafana/dashboards/platform.json"), &dash); err != nil {
		t.Fatal(err)
	}
	if dash["uid"] != "platform" || dash["title"] != "Platform" {
		t.Errorf("dashboard uid %v, title %v", dash["uid"], dash["title"])
	}
	queried := map[string]bool{}
	ids := map[float64]bool{}
	for i, p := range list(dash, "panels") {
		id, _ := mapping(p)["id"].(float64)
		if ids[id] || id == 0 {
			t.Errorf("panel %d: id %v is missing or not unique", i, id)
		}
		ids[id] = true
		if uid := str(p, "datasource", "uid"); uid != str(ds[0], "uid") {
			t.Errorf("panel %q: data source %q, want %q", str(p, "title"), uid, str(ds[0], "uid"))
		}
		targets := list(p, "targets")
		if len(targets) == 0 {
			t.Errorf("panel %q has no query", str(p, "title"))
		}
		for _, target := range targets {
			expr := str(target, "expr")
			metrics := promqlMetrics(expr)
			if len(metrics) == 0 {
				t.Errorf("panel %q: %q selects no metric", str(p, "title"), expr)
			}
			for _, m := range metrics {
				if m != "up" && !registered[m] {
					t.Errorf("panel %q queries %s, which the platform does not register", str(p, "title"), m)
				}
				queried[m] = true
			}
		}
	}
	// Every metric of the runtime is on the dashboard.
	for name := range registered {
		base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, "_bucket"), "_sum"), "_count")
		if !queried[name] && !queried[base+"_bucket"] && !queried[base] {
			t.Errorf("the dashboard shows no panel of %s", name)
		}
	}
}
