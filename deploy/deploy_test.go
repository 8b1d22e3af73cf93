// Package deploy holds the deployment files (deploy/README.md); its tests
// parse every one of them and check them against each other and against
// the platform's source: routes, metric names, configuration keys.
package deploy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// root is the repository's root, from this package's directory.
const root = ".."

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// docs parses every YAML document of a file.
func docs(t *testing.T, name string) []map[string]any {
	t.Helper()
	dec := yaml.NewDecoder(bytes.NewReader(readFile(t, name)))
	var out []map[string]any
	for {
		var doc map[string]any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if doc != nil {
			out = append(out, doc)
		}
	}
}

// get walks a path of map keys and list indexes ("0") through a parsed
// document; ok is false where it leads nowhere.
func get(v any, path ...string) (any, bool) {
	for _, p := range path {
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[p]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

func str(v any, path ...string) string {
	x, _ := get(v, path...)
	s, _ := x.(string)
	return s
}

func list(v any, path ...string) []any {
	x, _ := get(v, path...)
	l, _ := x.([]any)
	return l
}

func mapping(v any, path ...string) map[string]any {
	x, _ := get(v, path...)
	m, _ := x.(map[string]any)
	return m
}

// strings of a list of strings (a YAML list or a single string).
func stringList(t *testing.T, what string, v any) []string {
	t.Helper()
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				t.Fatalf("%s: %v is not a string", what, e)
			}
			out = append(out, s)
		}
		return out
	}
	t.Fatalf("%s: %v is not a list of strings", what, v)
	return nil
}

// TestDeployFilesParse parses every YAML and JSON file under deploy/.
func TestDeployFilesParse(t *testing.T) {
	var n int
	err := filepath.WalkDir(".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		switch filepath.Ext(name) {
		case ".yaml", ".yml":
			if len(docs(t, name)) == 0 {
				t.Errorf("%s holds no document", name)
			}
			n++
		case ".json":
			var v any
			if err := json.Unmarshal(readFile(t, name), &v); err != nil {
				t.Errorf("%s: %v", name, err)
			}
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 10 {
		t.Fatalf("parsed %d files, want the compose, Prometheus, Grafana and Kubernetes files", n)
	}
}

// routes are the GET routes of the platform's API (api/routes.go).
func routes(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, m := range regexp.MustCompile(`\{method: "GET", path: "([^"]+)"`).FindAllSubmatch(readFile(t, filepath.Join(root, "api", "routes.go")), -1) {
		out = append(out, string(m[1]))
	}
	for _, want := range []string{"/healthz", "/readyz", "/metrics"} {
		if !slices.Contains(out, want) {
			t.Fatalf("api/routes.go has no GET %s (routes: %q)", want, out)
		}
	}
	return out
}

// configKeys are the keys of `platform serve`'s configuration: its flags
// (cmd/platform/config.go) and api.tokens.
func configKeys(t *testing.T) []string {
	t.Helper()
	keys := []string{"api.tokens"}
	for _, m := range regexp.MustCompile(`f\.(?:String|Int|Int64|Duration|Bool)\("([a-z_.]+)"`).FindAllSubmatch(readFile(t, filepath.Join(root, "cmd", "platform", "config.go")), -1) {
		keys = append(keys, string(m[1]))
	}
	for _, want := range []string{"nats.url", "nats.host", "nats.port", "data_dir", "http.addr"} {
		if !slices.Contains(keys, want) {
			t.Fatalf("cmd/platform/config.go declares no key %s", want)
		}
	}
	return keys
}

// envKey is the configuration key of a PLATFORM_* variable, or "".
func envKey(keys []string, env string) string {
	for _, k := range keys {
		if "PLATFORM_"+strings.ToUpper(strings.NewReplacer(".", "_").Replace(k)) == env {
			return k
		}
	}
	return ""
}

// service is a compose service, as far as these tests look at it.
type service struct {
	Image       string         `yaml:"image"`
	Build       map[string]any `yaml:"build"`
	Command     []string       `yaml:"command"`
	Environment map[string]any `yaml:"environment"`
	Volumes     []string       `yaml:"volumes"`
	Ports       []string       `yaml:"ports"`
	DependsOn   any            `yaml:"depends_on"`
}

type compose struct {
	Services map[string]service `yaml:"services"`
	Volumes  map[string]any     `yaml:"volumes"`
}

func loadCompose(t *testing.T) compose {
	t.Helper()
	var c compose
	if err := yaml.Unmarshal(readFile(t, "compose.yaml"), &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// flagValue is the value after flag in a command line.
func flagValue(cmd []string, flag string) string {
	if i := slices.Index(cmd, flag); i >= 0 && i+1 < len(cmd) {
		return cmd[i+1]
	}
	return ""
}

// TestDeployCompose checks deploy/compose.yaml: every service has an image
// (the platform's built from deploy/Dockerfile), its dependencies and
// named volumes exist and every declared volume is used, bind mounts name
// files of deploy/, published ports are unique and bound to loopback, the
// NATS servers form one JetStream cluster whose routes name each other,
// and the platform's environment holds configuration keys, with nats.url
// naming every NATS server's client port.
func TestDeployCompose(t *testing.T) {
	c := loadCompose(t)
	keys := configKeys(t)
	want := []string{"grafana", "nats-1", "nats-2", "nats-3", "platform", "prometheus"}
	var names []string
	for name := range c.Services {
		names = append(names, name)
	}
	slices.Sort(names)
	if !slices.Equal(names, want) {
		t.Fatalf("services %q, want %q", names, want)
	}
	used := map[string]bool{}
	published := map[string]string{}
	for name, s := range c.Services {
		if s.Image == "" || !regexp.MustCompile(`^[a-z0-9./_-]+:[A-Za-z0-9.${}:_-]+$`).MatchString(s.Image) {
			t.Errorf("%s: image %q, want a pinned name:tag", name, s.Image)
		}
		if s.Build != nil {
			ctx, _ := s.Build["context"].(string)
			dockerfile, _ := s.Build["dockerfile"].(string)
			if _, err := os.Stat(filepath.Join(ctx, dockerfile)); err != nil {
				t.Errorf("%s: build: %v", name, err)
			}
			if filepath.Clean(ctx) != root {
				t.Errorf("%s: build context %s, want the repository's root", name, ctx)
			}
		}
		deps := c.dependencies(t, name)
		for _, d := range deps {
			if _, ok := c.Services[d]; !ok || d == name {
				t.Errorf("%s depends on %q, which is no other service", name, d)
			}
		}
		for _, v := range s.Volumes {
			parts := strings.Split(v, ":")
			if len(parts) < 2 || !strings.HasPrefix(parts[1], "/") {
				t.Errorf("%s: volume %q, want SOURCE:/PATH[:ro]", name, v)
				continue
			}
			if src := parts[0]; strings.HasPrefix(src, ".") || strings.HasPrefix(src, "/") {
				if _, err := os.Stat(src); err != nil {
					t.Errorf("%s: bind mount %s: %v", name, v, err)
				}
			} else if _, ok := c.Volumes[src]; !ok {
				t.Errorf("%s: volume %s is not declared", name, src)
			} else {
				used[src] = true
			}
		}
		for _, p := range s.Ports {
			parts := strings.Split(p, ":")
			if len(parts) != 3 || parts[0] != "127.0.0.1" {
				t.Errorf("%s: port %q, want 127.0.0.1:HOST:CONTAINER", name, p)
				continue
			}
			if other, ok := published[parts[1]]; ok {
				t.Errorf("host port %s is published by %s and %s", parts[1], other, name)
			}
			published[parts[1]] = name
		}
	}
	for v := range c.Volumes {
		if !used[v] {
			t.Errorf("volume %s is declared and not used", v)
		}
	}
	if want := map[string]string{"4222": "nats-1", "8080": "platform", "9090": "prometheus", "3000": "grafana"}; !mapsEqual(published, want) {
		t.Errorf("published ports %v, want %v", published, want)
	}

	// The NATS cluster.
	var nats []string
	for _, name := range names {
		if strings.HasPrefix(c.Services[name].Image, "nats:") {
			nats = append(nats, name)
		}
	}
	if len(nats) != 3 {
		t.Fatalf("NATS services %q, want 3", nats)
	}
	for _, name := range nats {
		cmd := c.Services[name].Command
		if !slices.Contains(cmd, "--jetstream") || flagValue(cmd, "--store_dir") == "" || flagValue(cmd, "--name") != name ||
			flagValue(cmd, "--cluster_name") != "platform" || flagValue(cmd, "--cluster") != "nats://0.0.0.0:6222" {
			t.Errorf("%s: command %q, want JetStream with a store, its name and cluster platform on 6222", name, cmd)
		}
		var routes []string
		for _, r := range strings.Split(flagValue(cmd, "--routes"), ",") {
			routes = append(routes, strings.TrimPrefix(r, "nats://"))
		}
		var want []string
		for _, other := range nats {
			if other != name {
				want = append(want, other+":6222")
			}
		}
		if !slices.Equal(routes, want) {
			t.Errorf("%s: routes %q, want %q", name, routes, want)
		}
		if mount := flagValue(cmd, "--store_dir"); !slices.ContainsFunc(c.Services[name].Volumes, func(v string) bool { return strings.Contains(v, ":"+mount) }) {
			t.Errorf("%s: no volume on its store %s", name, mount)
		}
	}

	// The platform.
	p := c.Services["platform"]
	for env := range p.Environment {
		if envKey(keys, env) == "" {
			t.Errorf("platform: %s is no configuration key's variable", env)
		}
	}
	var hosts []string
	for _, u := range strings.Split(p.Environment["PLATFORM_NATS_URL"].(string), ",") {
		hosts = append(hosts, strings.TrimPrefix(u, "nats://"))
	}
	var wantHosts []string
	for _, n := range nats {
		wantHosts = append(wantHosts, n+":4222")
	}
	if !slices.Equal(hosts, wantHosts) {
		t.Errorf("platform: nats.url names %q, want %q", hosts, wantHosts)
	}
	if deps := c.dependencies(t, "platform"); !slices.Equal(deps, nats) {
		t.Errorf("platform depends on %q, want %q", deps, nats)
	}
	if !slices.Contains(p.Volumes, "platform-data:/data") {
		t.Errorf("platform: volumes %q, want platform-data on /data (the image's data_dir)", p.Volumes)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// dependencies are a service's depends_on, a list or a map.
func (c compose) dependencies(t *testing.T, name string) []string {
	t.Helper()
	switch d := c.Services[name].DependsOn.(type) {
	case nil:
		return nil
	case map[string]any:
		var out []string
		for k := range d {
			out = append(out, k)
		}
		slices.Sort(out)
		return out
	default:
		return stringList(t, name+": depends_on", d)
	}
}

// TestDeployPrometheus checks that every scrape target is a compose service
// on a port it serves, at a route of the platform.
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
	if !slices.Equal(targets, []string{"platform:8080"}) {
		t.Errorf("targets %q, want the platform", targets)
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
// the source of the runtime and api packages: prometheus.NewDesc and
// Name: in collector options, with the _bucket, _sum and _count series of
// histograms.
func registeredMetrics(t *testing.T) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	descRE := regexp.MustCompile(`(\w+)\s*=\s*prometheus\.NewDesc\(\s*"([a-z_:]+)"`)
	nameRE := regexp.MustCompile(`Name:\s*"(platform_[a-z_:]+)"`)
	histRE := regexp.MustCompile(`NewConstHistogram\((\w+)`)
	for _, dir := range []string{"runtime", "runtime/exec", "api"} {
		files, err := filepath.Glob(filepath.Join(root, dir, "*.go"))
		if err != nil {
			t.Fatal(err)
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

// TestDeployKubernetes checks the manifests in deploy/k8s: each has
// apiVersion, kind and metadata.name; workloads' containers have images,
// resource limits, non-root security contexts and probes on the platform's
// /healthz and /readyz; Services select a workload's pods and target its
// ports; mounted ConfigMaps exist and hold configuration keys; the
// kustomization lists every manifest; and the NATS chart's values ask for
// a three-server JetStream cluster.
func TestDeployKubernetes(t *testing.T) {
	rs := routes(t)
	keys := configKeys(t)
	files, err := filepath.Glob("k8s/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	objects := map[string]map[string]any{} // kind/name
	var manifests []string
	var kustomization map[string]any
	for _, f := range files {
		switch filepath.Base(f) {
		case "kustomization.yaml":
			kustomization = docs(t, f)[0]
			continue
		case "nats-values.yaml":
			continue
		}
		manifests = append(manifests, filepath.Base(f))
		for _, d := range docs(t, f) {
			kind, name := str(d, "kind"), str(d, "metadata", "name")
			if str(d, "apiVersion") == "" || kind == "" || name == "" {
				t.Errorf("%s: a document without apiVersion, kind or metadata.name", f)
				continue
			}
			want := map[string]string{"ConfigMap": "v1", "Service": "v1", "StatefulSet": "apps/v1", "Deployment": "apps/v1"}[kind]
			if want == "" || str(d, "apiVersion") != want {
				t.Errorf("%s: %s %s: apiVersion %s, want %q", f, kind, name, str(d, "apiVersion"), want)
			}
			if _, dup := objects[kind+"/"+name]; dup {
				t.Errorf("%s: %s %s is declared twice", f, kind, name)
			}
			objects[kind+"/"+name] = d
		}
	}
	if kustomization == nil {
		t.Fatal("no k8s/kustomization.yaml")
	}
	if res := stringList(t, "resources", kustomization["resources"]); !slices.Equal(res, manifests) {
		t.Errorf("kustomization resources %q, want %q", res, manifests)
	}

	var workloads int
	for key, d := range objects {
		kind := str(d, "kind")
		switch kind {
		case "StatefulSet", "Deployment":
			workloads++
			checkWorkload(t, key, d, objects, rs, keys)
			if kind == "StatefulSet" {
				if svc := str(d, "spec", "serviceName"); objects["Service/"+svc] == nil {
					t.Errorf("%s: serviceName %q is no Service", key, svc)
				} else if v, _ := get(objects["Service/"+svc], "spec", "clusterIP"); v != "None" {
					t.Errorf("%s: its Service %s is not headless", key, svc)
				}
			}
		case "Service":
			ports := list(d, "spec", "ports")
			if len(ports) == 0 {
				t.Errorf("%s has no ports", key)
			}
			sel := mapping(d, "spec", "selector")
			var matched map[string]any
			for _, w := range objects {
				if labels := mapping(w, "spec", "template", "metadata", "labels"); len(sel) > 0 && subset(sel, labels) {
					matched = w
				}
			}
			if matched == nil {
				t.Errorf("%s: selector %v selects no workload's pods", key, sel)
				continue
			}
			for _, p := range ports {
				if target := mapping(p)["targetPort"]; !containerPort(matched, target) {
					t.Errorf("%s: targetPort %v is no container port of %s", key, target, str(matched, "metadata", "name"))
				}
			}
		case "ConfigMap":
			if len(mapping(d, "data")) == 0 {
				t.Errorf("%s has no data", key)
			}
		default:
			t.Errorf("%s: kind %s is not checked here", key, kind)
		}
	}
	if workloads != 1 {
		t.Errorf("%d workloads, want the platform's", workloads)
	}

	values := docs(t, "k8s/nats-values.yaml")[0]
	if v, _ := get(values, "config", "cluster", "enabled"); v != true {
		t.Error("nats-values.yaml: config.cluster.enabled is not true")
	}
	if v, _ := get(values, "config", "cluster", "replicas"); v != 3 {
		t.Errorf("nats-values.yaml: config.cluster.replicas %v, want 3", v)
	}
	if v, _ := get(values, "config", "jetstream", "enabled"); v != true {
		t.Error("nats-values.yaml: config.jetstream.enabled is not true")
	}
	if v, _ := get(values, "config", "jetstream", "fileStore", "pvc", "enabled"); v != true {
		t.Error("nats-values.yaml: JetStream's file store is not on a persistent volume")
	}
}

func subset(sel, labels map[string]any) bool {
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// containerPort says whether port (a name or a number) is a port of one of
// the workload's containers.
func containerPort(workload map[string]any, port any) bool {
	for _, c := range list(workload, "spec", "template", "spec", "containers") {
		for _, p := range list(c, "ports") {
			if mapping(p)["name"] == port || mapping(p)["containerPort"] == port {
				return true
			}
		}
	}
	return false
}

func checkWorkload(t *testing.T, key string, d map[string]any, objects map[string]map[string]any, rs, keys []string) {
	t.Helper()
	if !subset(mapping(d, "spec", "selector", "matchLabels"), mapping(d, "spec", "template", "metadata", "labels")) || len(mapping(d, "spec", "selector", "matchLabels")) == 0 {
		t.Errorf("%s: selector does not match its pod template's labels", key)
	}
	pod := mapping(d, "spec", "template", "spec")
	if v, _ := get(pod, "securityContext", "runAsNonRoot"); v != true {
		t.Errorf("%s: pod securityContext.runAsNonRoot is not true", key)
	}
	if uid, _ := get(pod, "securityContext", "runAsUser"); uid == 0 {
		t.Errorf("%s: runs as root", key)
	}
	volumes := map[string]map[string]any{}
	for _, v := range list(pod, "volumes") {
		volumes[str(v, "name")] = mapping(v)
	}
	for _, v := range list(d, "spec", "volumeClaimTemplates") {
		volumes[str(v, "metadata", "name")] = mapping(v)
	}
	containers := list(pod, "containers")
	if len(containers) == 0 {
		t.Fatalf("%s has no containers", key)
	}
	for _, c := range containers {
		name := key + " container " + str(c, "name")
		if !regexp.MustCompile(`^[a-z0-9./_-]+:[A-Za-z0-9._-]+$`).MatchString(str(c, "image")) {
			t.Errorf("%s: image %q, want name:tag", name, str(c, "image"))
		}
		if v, _ := get(c, "securityContext", "allowPrivilegeEscalation"); v != false {
			t.Errorf("%s: allowPrivilegeEscalation is not false", name)
		}
		if v, _ := get(c, "securityContext", "runAsNonRoot"); v != true {
			t.Errorf("%s: securityContext.runAsNonRoot is not true", name)
		}
		if caps := stringList(t, name+" capabilities.drop", mapping(c, "securityContext", "capabilities")["drop"]); !slices.Equal(caps, []string{"ALL"}) {
			t.Errorf("%s: capabilities.drop %q, want ALL", name, caps)
		}
		for _, r := range []string{"cpu", "memory"} {
			if str(c, "resources", "limits", r) == "" || str(c, "resources", "requests", r) == "" {
				t.Errorf("%s: no %s request and limit", name, r)
			}
		}
		probes := map[string]string{}
		for _, probe := range []string{"startupProbe", "livenessProbe", "readinessProbe"} {
			path := str(c, probe, "httpGet", "path")
			probes[probe] = path
			if !slices.Contains(rs, path) {
				t.Errorf("%s: %s path %q is no route of the platform", name, probe, path)
			}
			if port := mapping(c, probe, "httpGet")["port"]; !containerPort(d, port) {
				t.Errorf("%s: %s port %v is no container port", name, probe, port)
			}
		}
		if probes["livenessProbe"] != "/healthz" || probes["readinessProbe"] != "/readyz" {
			t.Errorf("%s: probes %v, want liveness on /healthz and readiness on /readyz", name, probes)
		}
		for _, e := range list(c, "env") {
			if envKey(keys, str(e, "name")) == "" {
				t.Errorf("%s: %s is no configuration key's variable", name, str(e, "name"))
			}
		}
		args := stringList(t, name+" args", mapping(c)["args"])
		if len(args) == 0 || args[0] != "serve" {
			t.Errorf("%s: args %q, want serve", name, args)
		}
		config := flagValue(args, "--config")
		var mountedConfig bool
		for _, m := range list(c, "volumeMounts") {
			v := volumes[str(m, "name")]
			if v == nil {
				t.Errorf("%s: mounts volume %s, which the pod does not declare", name, str(m, "name"))
				continue
			}
			cm := str(v, "configMap", "name")
			if cm == "" {
				continue
			}
			obj := objects["ConfigMap/"+cm]
			if obj == nil {
				t.Errorf("%s: ConfigMap %s does not exist", name, cm)
				continue
			}
			for file, text := range mapping(obj, "data") {
				if filepath.Join(str(m, "mountPath"), file) != config {
					continue
				}
				mountedConfig = true
				var settings map[string]any
				if err := yaml.Unmarshal([]byte(text.(string)), &settings); err != nil {
					t.Fatalf("%s: ConfigMap %s %s: %v", name, cm, file, err)
				}
				for k := range settings {
					if !slices.Contains(keys, k) {
						t.Errorf("ConfigMap %s %s: %s is no configuration key", cm, file, k)
					}
				}
				if settings["nats.url"] != "nats://nats:4222" {
					t.Errorf("ConfigMap %s: nats.url %v, want the NATS chart's Service nats", cm, settings["nats.url"])
				}
				var dataMount bool
				for _, m := range list(c, "volumeMounts") {
					dataMount = dataMount || str(m, "mountPath") == settings["data_dir"]
				}
				if !dataMount {
					t.Errorf("%s: data_dir %v is not a mounted volume", name, settings["data_dir"])
				}
			}
		}
		if !mountedConfig {
			t.Errorf("%s: --config %q is no file of a mounted ConfigMap", name, config)
		}
	}
}

// dockerfile is deploy/Dockerfile's instructions, continuation lines
// joined, comments dropped.
func dockerfile(t *testing.T) []string {
	t.Helper()
	var out []string
	var cur string
	sc := bufio.NewScanner(bytes.NewReader(readFile(t, "Dockerfile")))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "#") || (line == "" && cur == "") {
			continue
		}
		if strings.HasSuffix(line, "\\") {
			cur += strings.TrimSuffix(line, "\\") + " "
			continue
		}
		out = append(out, cur+line)
		cur = ""
	}
	return out
}

// TestDeployDockerfile checks that the image is stamped with its version
// (the variable `platform version` prints), runs as a non-root user,
// checks its health with the binary, and that .dockerignore keeps what the
// build needs.
func TestDeployDockerfile(t *testing.T) {
	lines := dockerfile(t)
	var froms, args []string
	var user, health, entry string
	var build string
	for _, l := range lines {
		instr, rest, _ := strings.Cut(l, " ")
		switch strings.ToUpper(instr) {
		case "FROM":
			froms = append(froms, rest)
		case "ARG":
			args = append(args, rest)
		case "USER":
			user = rest
		case "HEALTHCHECK":
			health = rest
		case "ENTRYPOINT":
			entry = rest
		case "RUN":
			if strings.Contains(rest, "go build") {
				build = rest
			}
		}
	}
	if len(froms) != 2 || !strings.HasPrefix(froms[0], "golang:") || !strings.HasSuffix(froms[1], ":nonroot") {
		t.Errorf("FROM %q, want a golang build stage and a nonroot runtime", froms)
	}
	if !strings.Contains(build, `-X main.version=${VERSION}`) || !strings.Contains(build, "./cmd/platform") {
		t.Errorf("the build %q does not stamp main.version with VERSION", build)
	}
	if !regexp.MustCompile(`(?m)^var version = "dev"$`).Match(readFile(t, filepath.Join(root, "cmd", "platform", "commands.go"))) {
		t.Error("cmd/platform has no var version for -X main.version")
	}
	if slices.Index(args, "VERSION=dev") < 0 || len(args) != 2 {
		t.Errorf("ARG %q, want VERSION=dev in both stages", args)
	}
	if uid := strings.Split(user, ":")[0]; uid == "" || uid == "0" || uid == "root" {
		t.Errorf("USER %q, want a non-root user", user)
	}
	if !strings.Contains(health, `CMD ["/usr/local/bin/platform", "health"`) {
		t.Errorf("HEALTHCHECK %q, want platform health", health)
	}
	if entry != `["/usr/local/bin/platform"]` {
		t.Errorf("ENTRYPOINT %q", entry)
	}

	ignore := string(readFile(t, filepath.Join(root, ".dockerignore")))
	var patterns []string
	for line := range strings.Lines(ignore) {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			patterns = append(patterns, line)
		}
	}
	for _, want := range []string{".git", "**/node_modules", "**/target"} {
		if !slices.Contains(patterns, want) {
			t.Errorf(".dockerignore lacks %s", want)
		}
	}
	for _, need := range []string{"go.mod", "go.sum", "cmd/platform/main.go", "sdk/go/register.go", "sdk/assemblyscript/package.json", "abi/abi.go", "sdks.go"} {
		for _, p := range patterns {
			if ok, _ := filepath.Match(strings.TrimPrefix(p, "/"), need); ok || strings.HasPrefix(need, strings.TrimSuffix(p, "/")+"/") {
				t.Errorf(".dockerignore's %s leaves out %s, which the build needs", p, need)
			}
		}
	}
}

// unit parses a systemd unit file into section -> key -> values.
func unit(t *testing.T, name string) map[string]map[string][]string {
	t.Helper()
	out := map[string]map[string][]string{}
	var section string
	sc := bufio.NewScanner(bytes.NewReader(readFile(t, name)))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "["):
			section = strings.Trim(line, "[]")
			out[section] = map[string][]string{}
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || section == "" {
				t.Fatalf("%s: line %q", name, line)
			}
			out[section][k] = append(out[section][k], v)
		}
	}
	return out
}

// TestDeploySystemd checks deploy/platform.service: a state directory that
// is the data directory, a non-root user, the hardening settings, and no
// MemoryDenyWriteExecute (wazero maps compiled code executable); and runs
// systemd-analyze verify on it where systemd-analyze is installed.
func TestDeploySystemd(t *testing.T) {
	u := unit(t, "platform.service")
	svc := u["Service"]
	one := func(k string) string {
		if len(svc[k]) != 1 {
			t.Errorf("Service.%s: %q, want one value", k, svc[k])
			return ""
		}
		return svc[k][0]
	}
	state := one("StateDirectory")
	if want := "/usr/local/bin/platform serve --data_dir /var/lib/" + state; state == "" || one("ExecStart") != want {
		t.Errorf("ExecStart %q, want %q", svc["ExecStart"], want)
	}
	if user := one("User"); user == "" || user == "root" || user == "0" {
		t.Errorf("User %q, want a non-root user", user)
	}
	for k, want := range map[string]string{
		"NoNewPrivileges": "yes", "ProtectSystem": "strict", "ProtectHome": "yes", "PrivateTmp": "yes", "PrivateDevices": "yes",
		"ProtectKernelTunables": "yes", "ProtectKernelModules": "yes", "ProtectControlGroups": "yes", "RestrictSUIDSGID": "yes",
		"CapabilityBoundingSet": "", "Restart": "on-failure", "Type": "simple",
	} {
		if got := one(k); got != want {
			t.Errorf("Service.%s = %q, want %q", k, got, want)
		}
	}
	if _, ok := svc["MemoryDenyWriteExecute"]; ok {
		t.Error("MemoryDenyWriteExecute would stop wazero's compiler")
	}
	if env := one("Environment"); env != "PLATFORM_HTTP_ADDR=127.0.0.1:8080" {
		t.Errorf("Environment %q", env)
	}
	if got := u["Install"]["WantedBy"]; !slices.Equal(got, []string{"multi-user.target"}) {
		t.Errorf("WantedBy %q", got)
	}

	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed")
	}
	// verify checks that ExecStart's binary exists: point it at one that
	// does.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	text := strings.ReplaceAll(string(readFile(t, "platform.service")), "/usr/local/bin/platform", self)
	if err := os.WriteFile(filepath.Join(dir, "platform.service"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(analyze, "verify", filepath.Join(dir, "platform.service")).CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
}
