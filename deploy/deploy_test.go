package deploy

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

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
	StopGrace   string         `yaml:"stop_grace_period"`
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
// and the platform workers run in cluster mode on it (checkComposeWorkers).
func TestDeployCompose(t *testing.T) {
	c := loadCompose(t)
	keys := configKeys(t)
	want := []string{"grafana", "nats-1", "nats-2", "nats-3", "platform-1", "platform-2", "platform-3", "prometheus"}
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
	if want := map[string]string{"4222": "nats-1", "8080": "platform-1", "8081": "platform-2", "8082": "platform-3", "9090": "prometheus", "3000": "grafana"}; !mapsEqual(published, want) {
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

	checkComposeWorkers(t, c, nats, keys)
}

// platformImage is the image the platform's services run.
const platformImage = "wasmstream/platform:"

// workers are the compose services that run the platform, by name.
func (c compose) workers() []string {
	var out []string
	for name, s := range c.Services {
		if strings.HasPrefix(s.Image, platformImage) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// checkComposeWorkers checks the platform workers of compose.yaml: three,
// built alike from deploy/Dockerfile, each with configuration keys in its
// environment and the same environment as the others but for its own
// worker id (its service name) and advertised URL (its service name and
// API port, how the others reach it in the compose network); nats.url
// names every NATS server's client port, the platform's buckets have as
// many replicas as there are NATS servers, checkpoints go to JetStream
// (the default in cluster mode) and logs are JSON. Each has a data volume
// of its own on /data, publishes its API on its own host port, depends on
// the NATS servers and has the time to hand its jobs over when stopped.
func checkComposeWorkers(t *testing.T, c compose, nats, keys []string) {
	t.Helper()
	workers := c.workers()
	if want := []string{"platform-1", "platform-2", "platform-3"}; !slices.Equal(workers, want) {
		t.Fatalf("platform workers %q, want %q", workers, want)
	}
	var wantHosts []string
	for _, n := range nats {
		wantHosts = append(wantHosts, n+":4222")
	}
	shutdown := shutdownTimeout(t)
	first := c.Services[workers[0]]
	volumeOf := map[string]string{}
	for _, name := range workers {
		p := c.Services[name]
		for env := range p.Environment {
			if envKey(keys, env) == "" {
				t.Errorf("%s: %s is no configuration key's variable", name, env)
			}
		}
		env := func(key string) string { v, _ := p.Environment[key].(string); return v }
		var hosts []string
		for _, u := range strings.Split(env("PLATFORM_NATS_URL"), ",") {
			hosts = append(hosts, strings.TrimPrefix(u, "nats://"))
		}
		if !slices.Equal(hosts, wantHosts) {
			t.Errorf("%s: nats.url names %q, want %q", name, hosts, wantHosts)
		}
		if got, want := env("PLATFORM_NATS_REPLICAS"), strconv.Itoa(len(nats)); got != want {
			t.Errorf("%s: PLATFORM_NATS_REPLICAS %v, want %q, one replica per NATS server", name, p.Environment["PLATFORM_NATS_REPLICAS"], want)
		}
		if store, ok := p.Environment["PLATFORM_CHECKPOINT_STORE"]; ok && store != "jetstream" {
			t.Errorf("%s: checkpoint.store %v, want jetstream (the default in cluster mode), where every worker reads them", name, store)
		}
		if env("PLATFORM_LOG_FORMAT") != "json" {
			t.Errorf("%s: log.format %v, want json", name, p.Environment["PLATFORM_LOG_FORMAT"])
		}
		if id := env("PLATFORM_CLUSTER_WORKER_ID"); id != name {
			t.Errorf("%s: cluster.worker_id %q, want the service's name", name, id)
		}
		if u, want := env("PLATFORM_CLUSTER_ADVERTISE_URL"), "http://"+name+":"+serviceHTTPPort(p); u != want {
			t.Errorf("%s: cluster.advertise_url %q, want %q, where the other workers reach it", name, u, want)
		}
		// The rest of the environment is the same on every worker.
		vars := slices.Concat(mapKeys(p.Environment), mapKeys(first.Environment))
		slices.Sort(vars)
		for _, k := range slices.Compact(vars) {
			if k == "PLATFORM_CLUSTER_WORKER_ID" || k == "PLATFORM_CLUSTER_ADVERTISE_URL" {
				continue
			}
			if a, b := p.Environment[k], first.Environment[k]; a != b {
				t.Errorf("%s: %s is %v, and %v on %s", name, k, a, b, workers[0])
			}
		}
		if p.Image != first.Image || !reflect.DeepEqual(p.Build, first.Build) || p.Build == nil {
			t.Errorf("%s: image %s, build %v; want the build and image of %s", name, p.Image, p.Build, workers[0])
		}
		if deps := c.dependencies(t, name); !slices.Equal(deps, nats) {
			t.Errorf("%s depends on %q, want %q", name, deps, nats)
		}
		var data []string
		for _, v := range p.Volumes {
			if src, dst, _ := strings.Cut(v, ":"); dst == "/data" {
				data = append(data, src)
			}
		}
		if len(data) != 1 {
			t.Errorf("%s: volumes %q, want one on /data (the image's data_dir)", name, p.Volumes)
		} else if other, ok := volumeOf[data[0]]; ok {
			t.Errorf("%s and %s share the data volume %s: a data_dir is one process's", other, name, data[0])
		} else {
			volumeOf[data[0]] = name
		}
		if len(p.Ports) != 1 || !strings.HasSuffix(p.Ports[0], ":"+serviceHTTPPort(p)) {
			t.Errorf("%s: ports %q, want its API port published", name, p.Ports)
		}
		if grace, err := time.ParseDuration(p.StopGrace); err != nil || grace < shutdown+shutdownMargin {
			t.Errorf("%s: stop_grace_period %q, want at least %s: platform serve takes up to %s to stop its jobs and release their leases", name, p.StopGrace, shutdown+shutdownMargin, shutdown)
		}
	}
}

// shutdownMargin is the time beyond `platform serve`'s own shutdown
// timeout a container or pod is given before it is killed.
const shutdownMargin = 10 * time.Second

// shutdownTimeout is how long `platform serve` takes at most to stop once
// signalled (cmd/platform/commands.go): its jobs stop and their leases are
// released within it.
func shutdownTimeout(t *testing.T) time.Duration {
	t.Helper()
	m := regexp.MustCompile(`shutdown, cancel := context\.WithTimeout\(context\.Background\(\), (\d+) ?\* ?time\.Second\)`).FindSubmatch(readFile(t, filepath.Join(root, "cmd", "platform", "commands.go")))
	if m == nil {
		t.Fatal("cmd/platform/commands.go: no shutdown timeout of platform serve found")
	}
	n, _ := strconv.Atoi(string(m[1]))
	return time.Duration(n) * time.Second
}

func mapKeys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
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
