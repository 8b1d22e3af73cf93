package main

import (
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net"
	"os"
	goruntime "runtime"
	"strings"
	"time"

	"wasmstream.io/platform/cluster"
)

// workerConfig is this process's registration in the cluster: its id, the
// address its API serves at (addr, the listener's), its slots and version.
func workerConfig(cfg config, addr net.Addr, tls bool, log *slog.Logger) *cluster.Config {
	c := cfg.Cluster
	id := c.WorkerID
	if id == "" {
		id = defaultWorkerID()
	}
	slots := c.Slots
	if slots == 0 {
		slots = goruntime.NumCPU()
	}
	advertise := c.AdvertiseURL
	if advertise == "" {
		advertise = advertiseURL(addr, tls)
	}
	return &cluster.Config{
		Worker:  cluster.Worker{ID: id, Addr: strings.TrimSuffix(advertise, "/"), Slots: slots, Version: version, Started: time.Now().UTC()},
		Timeout: c.WorkerTimeout, Replicas: cfg.NATSReplicas, Logger: log.With("component", "cluster"),
	}
}

// defaultWorkerID is the host name and a random suffix: a restarted worker
// is a new one, whose predecessor's jobs move once its leases expire.
func defaultWorkerID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "worker"
	}
	var b [3]byte
	_, _ = rand.Read(b[:])
	return host + "-" + hex.EncodeToString(b[:])
}

// advertiseURL is the API's base URL as other machines reach it: an
// unspecified listen address (0.0.0.0, ::) is replaced by the host name.
func advertiseURL(addr net.Addr, tls bool) string {
	scheme := "http"
	if tls {
		scheme = "https"
	}
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return scheme + "://" + addr.String()
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		if name, err := os.Hostname(); err == nil && name != "" {
			host = name
		}
	}
	return scheme + "://" + net.JoinHostPort(host, port)
}
