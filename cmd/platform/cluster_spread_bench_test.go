package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/connector"
	"wasmstream.io/platform/internal/wasmbuild"
)

// spreadBenchJob is a CPU-bound Wasm job (encoding/json in Go compiled to
// Wasm, about 16 µs a record) at parallelism 2 over a bounded stream of
// four subject filters; %[3]s keys the map, which puts a hash edge between
// the source and the map, so that with placement spread half of the
// records cross workers.
const spreadBenchJob = `
name: spread-bench-%[1]d
parallelism: 2
placement: %[2]s
sources: [{id: in, jetstream: {stream: BIDS, subjects: [bids.0, bids.1, bids.2, bids.3], bounded: true}}]
operators: [{id: eur, input: in, %[3]smap: {module: %[4]s, function: bid_eur}}]
sinks: [{id: out, input: eur, discard: true}]
`

// TestClusterBenchSpreadScaling measures docs/PERFORMANCE.md's scaling of
// one job across workers: the same job on one worker pinned to core 0
// (taskset) and spread over two workers pinned to cores 0 and 1, runs
// interleaved, with the map chained to the source (no exchange) and keyed
// (a hash edge, half the records over NATS between the workers). Each
// worker's module is compiled by a first run that is not counted. A run
// lasts from the job's creation to its end, as the job reports them, and
// its CPU is the workers' processes' and this one's (the NATS server's),
// read from /proc.
func TestClusterBenchSpreadScaling(t *testing.T) {
	if !*clusterBench {
		t.Skip("a measurement: -cluster-bench runs it")
	}
	if _, err := exec.LookPath("taskset"); err != nil {
		t.Skip("needs taskset")
	}
	const records = 400000
	ctx := context.Background()
	bin := buildPlatform(t)
	srv := startStandaloneNATS(t)
	var workers []*child
	for i := range 2 {
		w := &child{t: t, bin: bin, dir: t.TempDir(), http: fmt.Sprintf("127.0.0.1:%d", freePort(t)),
			wrap: []string{"taskset", "-c", strconv.Itoa(i)},
			args: []string{"--nats.url", srv.ClientURL(), "--cluster.worker_id", "w" + strconv.Itoa(i+1),
				"--cluster.slots", "2", "--nats.replicas", "1"}}
		t.Cleanup(w.stop)
		w.start()
		workers = append(workers, w)
	}
	tc := &testCluster{t: t, bin: bin, workers: workers}
	nc, js, err := connector.Connect(ctx, srv.ClientURL(), "spread-bench")
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "BIDS", Subjects: []string{"bids.>"}, Storage: jetstream.FileStorage}); err != nil {
		t.Fatal(err)
	}
	// 10,007 auctions split the keyed map's records 49.8/50.2 between its
	// two subtasks; 97 split them 47.4/52.6, which alone would cap the
	// keyed scaling at 1.90x.
	var payloads [][]byte
	for i := range records {
		payloads = append(payloads, fmt.Appendf(nil, `{"auction":%d,"bidder":%d,"price":%d,"channel":"channel-%d","url":"https://example.com/%d","dateTime":%d,"extra":""}`,
			1000+i%10007, 2000+i%89, 100+i, i%4, i, 1700000000000+int64(i)))
	}
	publishAll(t, js, payloads, func(i int) string { return fmt.Sprintf("bids.%d", i%4) })
	mod := workers[0].upload(wasmbuild.UDF(t, "jsonmap-std"))
	run := 0
	pids := []int{os.Getpid(), workers[0].cmd.Process.Pid, workers[1].cmd.Process.Pid}
	defer pinSelf(t, selfCPUs(t))
	// timed runs the job and returns its records/s and the CPU seconds
	// the workers and the NATS server spent on it, checking where it ran.
	// The NATS server has the job's cores: core 0 for one worker, cores 0
	// and 1 for two, so that one worker does not have a core of its own
	// for NATS that two workers must share.
	timed := func(placement, keyed string) (rate, cpu float64) {
		run++
		pinSelf(t, map[string]string{"local": "0", "spread": "0,1"}[placement])
		before := cpuSeconds(t, pids...)
		id := workers[0].submit(fmt.Sprintf(spreadBenchJob, run, placement, keyed, mod.ID))
		tc.waitFinished(id)
		cpu = cpuSeconds(t, pids...) - before
		info := workers[0].job(id)
		var ran []string
		for _, v := range info.Vertices {
			for _, w := range v.Workers {
				if !slices.Contains(ran, w) {
					ran = append(ran, w)
				}
			}
		}
		if want := map[string]int{"local": 1, "spread": 2}[placement]; len(ran) != want {
			t.Fatalf("job %s (%s) ran on %v, want %d workers", id, placement, ran, want)
		}
		for _, v := range info.Vertices {
			if v.ID == "eur" && v.RecordsIn != records {
				t.Fatalf("job %s (%s, on %v): the map took %d records, want %d", id, placement, ran, v.RecordsIn, records)
			}
		}
		return records / info.Ended.Sub(info.Created).Seconds(), cpu
	}
	for _, keyed := range []string{"", "key_by: {field: auction}, "} {
		name := map[string]string{"": "chained", "key_by: {field: auction}, ": "keyed"}[keyed]
		timed("local", keyed)
		timed("spread", keyed)
		var one, two []float64
		for i := range 5 {
			rateOne, cpuOne := timed("local", keyed)
			rateTwo, cpuTwo := timed("spread", keyed)
			one, two = append(one, rateOne), append(two, rateTwo)
			t.Logf("%s run %d: one worker %.0f records/s, two workers %.0f records/s (%.2fx); CPU %.2f s, %.2f s (%.3fx)",
				name, i+1, rateOne, rateTwo, rateTwo/rateOne, cpuOne, cpuTwo, cpuTwo/cpuOne)
		}
		slices.Sort(one)
		slices.Sort(two)
		t.Logf("%s, median of 5: one worker %.0f records/s, two workers %.0f records/s: %.2fx", name, one[2], two[2], two[2]/one[2])
	}
}

// cpuSeconds is the CPU time, user and system, that the processes pids
// have used, in seconds.
func cpuSeconds(t *testing.T, pids ...int) float64 {
	t.Helper()
	var ticks int
	for _, pid := range pids {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			t.Fatal(err)
		}
		// The fields after the command's closing parenthesis; utime and
		// stime are the 14th and 15th of the whole line.
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		for _, f := range fields[11:13] {
			n, err := strconv.Atoi(f)
			if err != nil {
				t.Fatalf("%s: %v", stat, err)
			}
			ticks += n
		}
	}
	return float64(ticks) / clockTicks
}

// clockTicks is Linux's USER_HZ, the unit of /proc's CPU times.
const clockTicks = 100

// selfCPUs is the list of CPUs the test process may run on, in taskset's
// list form.
func selfCPUs(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("taskset", "-p", "-c", strconv.Itoa(os.Getpid())).CombinedOutput()
	if err != nil {
		t.Fatalf("taskset: %v: %s", err, out)
	}
	// "pid 123's current affinity list: 0,1"
	_, list, ok := strings.Cut(strings.TrimSpace(string(out)), ": ")
	if !ok {
		t.Fatalf("taskset said %q", out)
	}
	return list
}

// pinSelf confines every thread of the test process, and so the NATS
// server it runs, to cpus (taskset's list form).
func pinSelf(t *testing.T, cpus string) {
	t.Helper()
	if out, err := exec.Command("taskset", "-a", "-p", "-c", cpus, strconv.Itoa(os.Getpid())).CombinedOutput(); err != nil {
		t.Fatalf("taskset: %v: %s", err, out)
	}
}
