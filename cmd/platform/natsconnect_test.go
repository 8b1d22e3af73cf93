package main

import (
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// TestServeExitsWhenNATSIsUnreachable: with nats.url naming a closed port,
// or a server that accepts connections and never answers, platform serve
// exits non-zero with an error naming the URL and nats.connect_timeout.
func TestServeExitsWhenNATSIsUnreachable(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs platform processes")
	}
	bin := buildPlatform(t)
	serve := func(url string) (int, string) {
		return runUntilExit(t, bin, "serve", "--data_dir", t.TempDir(), "--http.addr", fmt.Sprintf("127.0.0.1:%d", freePort(t)),
			"--nats.url", url, "--nats.connect_timeout", "1s", "--log.level", "warn")
	}

	t.Run("closed port", func(t *testing.T) {
		url := fmt.Sprintf("nats://127.0.0.1:%d", freePort(t))
		code, out := serve(url)
		want := fmt.Sprintf("error: cannot reach NATS at nats.url %s (nats.connect_timeout 1s): connector: connect to %s: nats: no servers available for connection\n", url, url)
		if code == 0 || out != want {
			t.Fatalf("exit %d, output %q; want a non-zero exit and %q", code, out, want)
		}
	})

	t.Run("silent server", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		// Accept connections and hold them without a word.
		go func() {
			var held []net.Conn
			defer func() {
				for _, c := range held {
					c.Close()
				}
			}()
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				held = append(held, c)
			}
		}()
		url := "nats://" + l.Addr().String()
		code, out := serve(url)
		// Which gives up first, the timeout over the whole connection or
		// the client's read of the server's greeting, depends on timing:
		// either says the server did not answer in time.
		prefix := fmt.Sprintf("error: cannot reach NATS at nats.url %s (nats.connect_timeout 1s): ", url)
		reason, ok := strings.CutPrefix(out, prefix)
		timedOut := reason == "context deadline exceeded\n" || (strings.HasPrefix(reason, "connector: connect to "+url+": read tcp ") && strings.HasSuffix(reason, ": i/o timeout\n"))
		if code == 0 || !ok || !timedOut {
			t.Fatalf("exit %d, output %q; want a non-zero exit and %q with a timeout", code, out, prefix)
		}
	})
}

// TestConfigNATSConnectTimeoutAndReplicas: nats.connect_timeout defaults to
// 5s and nats.replicas to 1; both come from a flag or the environment, and
// values out of range are refused.
func TestConfigNATSConnectTimeoutAndReplicas(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		env      map[string]string
		timeout  time.Duration
		replicas int
	}{
		{nil, nil, 5 * time.Second, 1},
		{[]string{"--nats.connect_timeout", "250ms", "--nats.replicas", "3"}, nil, 250 * time.Millisecond, 3},
		{nil, map[string]string{"PLATFORM_NATS_CONNECT_TIMEOUT": "1m", "PLATFORM_NATS_REPLICAS": "5"}, time.Minute, 5},
	} {
		for k, v := range tc.env {
			t.Setenv(k, v)
		}
		cfg, err := loadConfig(t, tc.args...)
		if err != nil || cfg.NATSConnectTimeout != tc.timeout || cfg.natsConnectTimeout() != tc.timeout || cfg.NATSReplicas != tc.replicas {
			t.Errorf("%v %v: timeout %v, replicas %d, %v; want %v and %d", tc.args, tc.env, cfg.NATSConnectTimeout, cfg.NATSReplicas, err, tc.timeout, tc.replicas)
		}
		for k := range tc.env {
			if err := os.Unsetenv(k); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--nats.connect_timeout", "0s"}, "nats.connect_timeout: 0s is not positive"},
		{[]string{"--nats.connect_timeout", "-1s"}, "nats.connect_timeout: -1s is not positive"},
		{[]string{"--nats.replicas", "0"}, "nats.replicas: 0 is not between 1 and 5"},
		{[]string{"--nats.replicas", "6"}, "nats.replicas: 6 is not between 1 and 5"},
	} {
		if _, err := loadConfig(t, tc.args...); err == nil || err.Error() != tc.want {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
	// A config built in code (tests, platform demo) leaves the timeout
	// zero: it takes the default.
	if got := (config{}).natsConnectTimeout(); got != defaultNATSConnectTimeout {
		t.Errorf("zero nats.connect_timeout: %v, want %v", got, defaultNATSConnectTimeout)
	}
}
