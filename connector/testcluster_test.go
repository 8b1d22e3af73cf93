package connector

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// testCluster is a cluster of nats-server nodes with JetStream, running in
// the test's process and routed to each other over loopback, with a client
// connection to each node.
type testCluster struct {
	servers []*server.Server
	conns   []*nats.Conn
	js      []jetstream.JetStream
}

// startCluster starts a cluster of n nodes, each with a store directory of
// its own and random ports, and waits until its JetStream meta group has a
// leader that sees every node; all are shut down when the test ends.
func startCluster(tb testing.TB, n int) *testCluster {
	tb.Helper()
	ports := freePorts(tb, n)
	routes := make([]string, n)
	for i, p := range ports {
		routes[i] = fmt.Sprintf("nats-route://127.0.0.1:%d", p)
	}
	c := &testCluster{}
	for i := range n {
		srv, err := server.NewServer(&server.Options{
			ServerName: fmt.Sprintf("n%d", i+1),
			Host:       "127.0.0.1",
			Port:       -1,
			JetStream:  true,
			StoreDir:   tb.TempDir(),
			NoSigs:     true,
			NoLog:      true,
			Cluster:    server.ClusterOpts{Name: "test", Host: "127.0.0.1", Port: ports[i]},
			Routes:     server.RoutesFromStr(strings.Join(routes, ",")),
		})
		if err != nil {
			tb.Fatal(err)
		}
		srv.Start()
		c.servers = append(c.servers, srv)
		tb.Cleanup(func() { shutdown(srv) })
	}
	for _, srv := range c.servers {
		if !srv.ReadyForConnections(10 * time.Second) {
			tb.Fatalf("node %s not ready for connections", srv.Name())
		}
	}
	c.awaitMeta(tb)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, srv := range c.servers {
		nc, js, err := Connect(ctx, srv.ClientURL(), tb.Name())
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(nc.Close)
		c.conns = append(c.conns, nc)
		c.js = append(c.js, js)
	}
	return c
}

// freePorts are n loopback ports free a moment ago: a node's cluster port
// must be known before any node starts, for the others' routes.
func freePorts(tb testing.TB, n int) []int {
	tb.Helper()
	ports := make([]int, n)
	for i := range ports {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			tb.Fatal(err)
		}
		ports[i] = ln.Addr().(*net.TCPAddr).Port
		defer ln.Close()
	}
	return ports
}

// awaitMeta waits until one node leads the meta group with every node as
// a peer and every node is current.
func (c *testCluster) awaitMeta(tb testing.TB) {
	tb.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if c.metaReady() {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	tb.Fatalf("the JetStream meta group of %d nodes has no leader seeing them all", len(c.servers))
}

func (c *testCluster) metaReady() bool {
	leaders := 0
	for _, srv := range c.servers {
		if !srv.JetStreamIsCurrent() {
			return false
		}
		if srv.JetStreamIsLeader() {
			leaders++
			if len(srv.JetStreamClusterPeers()) != len(c.servers) {
				return false
			}
		}
	}
	return leaders == 1
}

// createStream creates a stream, trying again while the cluster is still
// placing its first streams.
func (c *testCluster) createStream(tb testing.TB, cfg jetstream.StreamConfig) {
	tb.Helper()
	ctx := testCtx(tb)
	var err error
	for range 50 {
		if _, err = c.js[0].CreateStream(ctx, cfg); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	tb.Fatalf("create stream %q: %v", cfg.Name, err)
}
