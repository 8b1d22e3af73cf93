package deploy

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"
)

// loadComposeSpec loads a compose file the way `docker compose` does, with
// the Compose Specification's loader: it validates the file against the
// specification's JSON schema (which it embeds, so nothing is fetched),
// interpolates ${VAR} from env, merges the YAML anchors, and checks the
// model's consistency (dependencies, volumes and networks that services
// name exist). It reads no file but content: build contexts and bind
// mounts are resolved as paths, not opened.
func loadComposeSpec(content []byte, env map[string]string) (*types.Project, error) {
	dir, err := filepath.Abs(".")
	if err != nil {
		return nil, err
	}
	return loader.LoadWithContext(context.Background(), types.ConfigDetails{
		WorkingDir:  dir,
		ConfigFiles: []types.ConfigFile{{Filename: filepath.Join(dir, "compose.yaml"), Content: content}},
		Environment: env,
	})
}

// TestDeployComposeSpec loads deploy/compose.yaml with the Compose
// Specification's loader, with VERSION set and unset, and checks that
// the model it yields is the one TestDeployCompose checks on the file
// itself: the same services, the workers' stop grace period and build as
// written, and every published port on loopback.
func TestDeployComposeSpec(t *testing.T) {
	content := readFile(t, "compose.yaml")
	c := loadCompose(t)
	var want []string
	for name := range c.Services {
		want = append(want, name)
	}
	slices.Sort(want)
	for _, env := range []map[string]string{{"VERSION": "v1.2.3"}, {}} {
		p, err := loadComposeSpec(content, env)
		if err != nil {
			t.Fatalf("compose.yaml with %v: %v", env, err)
		}
		tag := env["VERSION"]
		if tag == "" {
			tag = "dev"
		}
		if p.Name != "platform" {
			t.Errorf("project name %q, want platform", p.Name)
		}
		if got := p.ServiceNames(); !slices.Equal(sorted(got), want) {
			t.Errorf("services %q, want %q", sorted(got), want)
		}
		for _, name := range c.workers() {
			s := p.Services[name]
			if s.Image != platformImage+tag {
				t.Errorf("%s: image %q with %v, want %q", name, s.Image, env, platformImage+tag)
			}
			if s.Build == nil || s.Build.Dockerfile != "deploy/Dockerfile" || s.Build.Args["VERSION"] == nil || *s.Build.Args["VERSION"] != tag {
				t.Errorf("%s: build %+v, want deploy/Dockerfile with VERSION %s", name, s.Build, tag)
			}
			if grace, err := time.ParseDuration(c.Services[name].StopGrace); err != nil || s.StopGracePeriod == nil || time.Duration(*s.StopGracePeriod) != grace {
				t.Errorf("%s: stop_grace_period %v, want %q as written", name, s.StopGracePeriod, c.Services[name].StopGrace)
			}
			if s.Environment["PLATFORM_NATS_URL"] == nil {
				t.Errorf("%s: the shared environment (x-platform-env) is not merged in", name)
			}
		}
		for name, s := range p.Services {
			for _, port := range s.Ports {
				if port.HostIP != "127.0.0.1" {
					t.Errorf("%s: port %d published on %q, want 127.0.0.1", name, port.Target, port.HostIP)
				}
			}
		}
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// TestDeployComposeSpecRejects shows that loadComposeSpec catches what
// the structural checks of TestDeployCompose could miss: each case is
// deploy/compose.yaml with one change, which the loader must refuse with
// an error that names the problem.
func TestDeployComposeSpecRejects(t *testing.T) {
	content := string(readFile(t, "compose.yaml"))
	for _, tc := range []struct {
		name, old, new, err string
	}{
		{"unknown service key", "  stop_grace_period: 45s", "  stop_grace_perod: 45s", "stop_grace_perod"},
		{"unknown top-level key", "\nvolumes:\n", "\nvolume:\n", "volume"},
		{"wrong type", "  restart: unless-stopped\n  stop_grace_period", "  restart: [unless-stopped]\n  stop_grace_period", "restart"},
		{"bad duration", "stop_grace_period: 45s", "stop_grace_period: 45 seconds", "45 seconds"},
		{"bad port", `ports: ["127.0.0.1:8082:8080"]`, `ports: ["127.0.0.1:8082:http"]`, "http"},
		{"undefined dependency", "depends_on: [prometheus]", "depends_on: [prometheus-1]", "prometheus-1"},
		{"undeclared volume", `volumes: ["nats-3-data:/data"]`, `volumes: ["nats-4-data:/data"]`, "nats-4-data"},
		{"bad dependency condition", "depends_on: [prometheus]", "depends_on: {prometheus: {condition: service_up}}", "condition"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if n := strings.Count(content, tc.old); n != 1 {
				t.Fatalf("compose.yaml holds %q %d times, want once", tc.old, n)
			}
			_, err := loadComposeSpec([]byte(strings.Replace(content, tc.old, tc.new, 1)), nil)
			if err == nil {
				t.Fatalf("compose.yaml with %q for %q loads", tc.new, tc.old)
			}
			t.Logf("refused: %v", err)
			if !strings.Contains(err.Error(), tc.err) {
				t.Errorf("error %q does not mention %q", err, tc.err)
			}
		})
	}
}
