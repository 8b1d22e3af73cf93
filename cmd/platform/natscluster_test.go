package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/connector"
)

// natsNodeEnv makes the test binary a NATS server node (TestMain): it holds
// the node's natsNodeConfig as JSON.
const natsNodeEnv = "PLATFORM_TEST_NATS_NODE"

// natsNodeConfig is one node of a test cluster: its name (the server name
// JetStream reports), its loopback ports, its store and the cluster ports
// of the other nodes.
type natsNodeConfig struct {
	Name        string   `json:"name"`
	Cluster     string   `json:"cluster"`
	ClientPort  int      `json:"client_port"`
	ClusterPort int      `json:"cluster_port"`
	MonitorPort int      `json:"monitor_port"`
	StoreDir    string   `json:"store_dir"`
	Routes      []string `json:"routes"`
}

// runNATSNode is the child process of a test cluster's node: it runs a
// clustered JetStream server as spec says, logging to stderr, until it is
// sent SIGTERM or SIGINT or its standard input closes (the test process
// that started it has gone), and returns the exit code.
func runNATSNode(spec string) int {
	var cfg natsNodeConfig
	if err := json.Unmarshal([]byte(spec), &cfg); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", natsNodeEnv, err)
		return 2
	}
	var routes []*url.URL
	for _, r := range cfg.Routes {
		u, err := url.Parse(r)
		if err != nil {
			fmt.Fprintf(os.Stderr, "node %s: route %q: %v\n", cfg.Name, r, err)
			return 2
		}
		routes = append(routes, u)
	}
	srv, err := natsserver.NewServer(&natsserver.Options{
		ServerName: cfg.Name,
		Host:       "127.0.0.1",
		Port:       cfg.ClientPort,
		HTTPHost:   "127.0.0.1",
		HTTPPort:   cfg.MonitorPort,
		JetStream:  true,
		StoreDir:   cfg.StoreDir,
		Cluster:    natsserver.ClusterOpts{Name: cfg.Cluster, Host: "127.0.0.1", Port: cfg.ClusterPort},
		Routes:     routes,
		NoSigs:     true,
		Logtime:    true,
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "node %s: %v\n", cfg.Name, err)
		return 1
	}
	srv.ConfigureLogger()
	srv.Start()
	if !srv.ReadyForConnections(time.Minute) {
		fmt.Fprintf(os.Stderr, "node %s: not ready for connections after a minute\n", cfg.Name)
		srv.Shutdown()
		return 1
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, os.Interrupt)
	orphaned := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		close(orphaned)
	}()
	select {
	case <-stop:
	case <-orphaned:
	}
	srv.Shutdown()
	srv.WaitForShutdown()
	return 0
}

// natsCluster is a cluster of NATS server nodes on loopback, each a child
// process of the test (the test binary run as a node), so that a node can
// be SIGKILLed and started again on its ports and store.
type natsCluster struct {
	t     *testing.T
	nodes []*natsNode
}

// natsNode is one node's process.
type natsNode struct {
	cfg natsNodeConfig
	// logFile gathers what every run of the node logged.
	logFile string
	cmd     *exec.Cmd
	// stdin is the write end of the node's standard input: while the test
	// holds it open the node runs.
	stdin *os.File
	// exited is closed once the process has been reaped.
	exited chan struct{}
}

// startNATSCluster starts n clustered JetStream nodes on free loopback ports
// and waits until each of them answers JetStream requests, a meta leader
// elected; the test's cleanup kills them.
func startNATSCluster(t *testing.T, n int) *natsCluster {
	t.Helper()
	dir := t.TempDir()
	ports := distinctFreePorts(t, 3*n)
	c := &natsCluster{t: t}
	for i := range n {
		name := fmt.Sprintf("n%d", i)
		cfg := natsNodeConfig{
			Name: name, Cluster: "platform-test",
			ClientPort: ports[3*i], ClusterPort: ports[3*i+1], MonitorPort: ports[3*i+2],
			StoreDir: filepath.Join(dir, name),
		}
		for j := range n {
			if j != i {
				cfg.Routes = append(cfg.Routes, fmt.Sprintf("nats-route://127.0.0.1:%d", ports[3*j+1]))
			}
		}
		c.nodes = append(c.nodes, &natsNode{cfg: cfg, logFile: filepath.Join(dir, name+".log")})
	}
	t.Cleanup(c.stop)
	for i := range c.nodes {
		c.launch(i)
	}
	for i := range c.nodes {
		c.waitReady(i)
	}
	return c
}

// distinctFreePorts asks the kernel for n free loopback ports, all different.
func distinctFreePorts(t *testing.T, n int) []int {
	t.Helper()
	seen := map[int]bool{}
	var ports []int
	for len(ports) < n {
		if p := freePort(t); !seen[p] {
			seen[p] = true
			ports = append(ports, p)
		}
	}
	return ports
}

// launch starts node i's process.
func (c *natsCluster) launch(i int) {
	c.t.Helper()
	node := c.nodes[i]
	spec, err := json.Marshal(node.cfg)
	if err != nil {
		c.t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		c.t.Fatal(err)
	}
	logf, err := os.OpenFile(node.logFile, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		c.t.Fatal(err)
	}
	defer logf.Close()
	stdin, keep, err := os.Pipe()
	if err != nil {
		c.t.Fatal(err)
	}
	defer stdin.Close()
	cmd := exec.Command(self, "-test.run=^$")
	cmd.Env = append(os.Environ(), natsNodeEnv+"="+string(spec))
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, logf, logf
	if err := cmd.Start(); err != nil {
		keep.Close()
		c.t.Fatalf("node %s: %v", node.cfg.Name, err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	node.cmd, node.stdin, node.exited = cmd, keep, exited
}

// running says whether node i's process runs.
func (c *natsCluster) running(i int) bool {
	node := c.nodes[i]
	if node.cmd == nil {
		return false
	}
	select {
	case <-node.exited:
		return false
	default:
		return true
	}
}

// log is what node i logged.
func (c *natsCluster) log(i int) string {
	data, err := os.ReadFile(c.nodes[i].logFile)
	if err != nil {
		return err.Error()
	}
	return string(data)
}

// waitReady waits until node i answers JetStream requests (which needs a
// meta leader), for at most a minute.
func (c *natsCluster) waitReady(i int) {
	c.t.Helper()
	deadline := time.Now().Add(time.Minute)
	var err error
	for time.Now().Before(deadline) {
		if !c.running(i) {
			c.t.Fatalf("node %s exited:\n%s", c.nodes[i].cfg.Name, c.log(i))
		}
		if err = c.jetStreamAnswers(i); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	c.t.Fatalf("node %s: JetStream not ready after a minute: %v\n%s", c.nodes[i].cfg.Name, err, c.log(i))
}

// jetStreamAnswers asks node i, and only it, for the account's JetStream
// information.
func (c *natsCluster) jetStreamAnswers(i int) error {
	nc, err := nats.Connect(c.clientURL(i), nats.Timeout(2*time.Second), nats.NoReconnect())
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err = js.AccountInfo(ctx)
	return err
}

// clientURL is node i's client URL.
func (c *natsCluster) clientURL(i int) string {
	return fmt.Sprintf("nats://127.0.0.1:%d", c.nodes[i].cfg.ClientPort)
}

// URLs are the client URLs of every node, separated by commas, as nats.url
// and nats.Connect take them.
func (c *natsCluster) URLs() string {
	urls := make([]string, len(c.nodes))
	for i := range c.nodes {
		urls[i] = c.clientURL(i)
	}
	return strings.Join(urls, ",")
}

// Kill SIGKILLs node i and reaps it.
func (c *natsCluster) Kill(i int) {
	c.t.Helper()
	if !c.running(i) {
		c.t.Fatalf("node %s is not running", c.nodes[i].cfg.Name)
	}
	c.kill(i)
}

// kill SIGKILLs node i's process (by its pid) if it runs and waits for it.
func (c *natsCluster) kill(i int) {
	node := c.nodes[i]
	if node.cmd == nil {
		return
	}
	if c.running(i) {
		_ = node.cmd.Process.Signal(syscall.SIGKILL)
	}
	<-node.exited
	node.stdin.Close()
}

// Restart starts node i again, on the same ports and store, after Kill, and
// waits until it answers JetStream requests.
func (c *natsCluster) Restart(i int) {
	c.t.Helper()
	if c.running(i) {
		c.t.Fatalf("node %s is still running", c.nodes[i].cfg.Name)
	}
	c.launch(i)
	c.waitReady(i)
}

// stop kills every node still running.
func (c *natsCluster) stop() {
	for i := range c.nodes {
		c.kill(i)
	}
}

// connect opens a client connection on the cluster, reconnecting to
// another node when its own goes away.
func (c *natsCluster) connect() (jetstream.JetStream, func()) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nc, js, err := connector.Connect(ctx, c.URLs(), "natscluster-test")
	if err != nil {
		c.t.Fatal(err)
	}
	return js, nc.Close
}

// createStream creates a file stream replicated on every node. Just after
// the cluster has started, the meta leader may not yet count every peer,
// so an error is retried for at most 30 s.
func (c *natsCluster) createStream(js jetstream.JetStream, name string, subjects ...string) {
	c.t.Helper()
	cfg := jetstream.StreamConfig{Name: name, Subjects: subjects, Storage: jetstream.FileStorage, Replicas: len(c.nodes)}
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := js.CreateStream(ctx, cfg)
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("create stream %s with %d replicas: %v", name, cfg.Replicas, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// node is the index of the node of server name name, or -1.
func (c *natsCluster) node(name string) int {
	for i, n := range c.nodes {
		if n.cfg.Name == name {
			return i
		}
	}
	return -1
}

// placement is the nodes that hold stream name (its leader first) and its
// replica count.
func (c *natsCluster) placement(js jetstream.JetStream, name string) (nodes []int, replicas int) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, name)
	if err != nil {
		c.t.Fatalf("stream %s: %v", name, err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		c.t.Fatalf("stream %s: %v", name, err)
	}
	if info.Cluster == nil {
		c.t.Fatalf("stream %s: no cluster information", name)
	}
	nodes = append(nodes, c.node(info.Cluster.Leader))
	for _, r := range info.Cluster.Replicas {
		nodes = append(nodes, c.node(r.Name))
	}
	return nodes, info.Config.Replicas
}

// connectedTo is the node a client connection named name is on, as the
// nodes' monitoring endpoints list them, or -1.
func (c *natsCluster) connectedTo(name string) int {
	c.t.Helper()
	client := &http.Client{Timeout: 5 * time.Second}
	for i, node := range c.nodes {
		if !c.running(i) {
			continue
		}
		resp, err := client.Get(fmt.Sprintf("http://127.0.0.1:%d/connz?limit=4096", node.cfg.MonitorPort))
		if err != nil {
			c.t.Fatalf("node %s: connz: %v", node.cfg.Name, err)
		}
		var connz struct {
			Connections []struct {
				Name string `json:"name"`
			} `json:"connections"`
		}
		err = json.NewDecoder(resp.Body).Decode(&connz)
		resp.Body.Close()
		if err != nil {
			c.t.Fatalf("node %s: connz: %v", node.cfg.Name, err)
		}
		for _, conn := range connz.Connections {
			if conn.Name == name {
				return i
			}
		}
	}
	return -1
}

// waitCurrent waits, for at most a minute, until every replica of each
// stream named is current: a node started again catches up on its streams
// after it answers requests, and a consumer placed on it meanwhile would
// see only what it has caught up on.
func (c *natsCluster) waitCurrent(js jetstream.JetStream, names ...string) {
	c.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for _, name := range names {
		for {
			why := c.notCurrent(js, name)
			if why == "" {
				break
			}
			if time.Now().After(deadline) {
				c.t.Fatalf("stream %s: %s after a minute", name, why)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// notCurrent says why stream name is not current on every node it is
// replicated on, or "" when it is.
func (c *natsCluster) notCurrent(js jetstream.JetStream, name string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, name)
	if err != nil {
		return err.Error()
	}
	info, err := st.Info(ctx)
	switch {
	case err != nil:
		return err.Error()
	case info.Cluster == nil || info.Cluster.Leader == "":
		return "no leader"
	case len(info.Cluster.Replicas) != info.Config.Replicas-1:
		return fmt.Sprintf("%d replicas besides the leader, want %d", len(info.Cluster.Replicas), info.Config.Replicas-1)
	}
	for _, r := range info.Cluster.Replicas {
		if !r.Current || r.Offline || r.Lag > 0 {
			return fmt.Sprintf("replica %s: current %t, offline %t, lag %d", r.Name, r.Current, r.Offline, r.Lag)
		}
	}
	return ""
}
