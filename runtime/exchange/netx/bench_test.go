package netx

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/exchange"
)

// benchEpoch anchors the latency stamps on the monotonic clock.
var benchEpoch = time.Now()

func stamp() int64 { return int64(time.Since(benchEpoch)) }

// BenchmarkExchange moves b.N records of an 8-byte key and a 100-byte
// value from one producer to one consumer, through the in-process edge
// and through the network exchange over an embedded NATS server (two
// connections, as two workers), for each flush policy, with the exchange's
// default sizes (32 KiB buffers, 2 exclusive credits, 8 floating buffers,
// a pool of 9), and once more flushing every record with 128 floating
// buffers and a pool of 130. Each record carries its emit time: latency is
// from Emit to the consumer's decode, p50 and p99 of up to 65,536 samples.
// The network runs also report the payload bytes and the messages per
// record, data and control subjects together (NATS adds a protocol line
// to each message).
func BenchmarkExchange(b *testing.B) {
	url := startServer(b)
	na, nb := connect(b, url, "worker-a"), connect(b, url, "worker-b")
	for _, tc := range []struct {
		name string
		cfg  exchange.Config
	}{
		{"timeout=-1", exchange.Config{BufferTimeout: -1}},
		{"timeout=1ms", exchange.Config{BufferTimeout: time.Millisecond}},
		{"timeout=0", exchange.Config{BufferTimeout: 0}},
		{"timeout=0,floating=128", exchange.Config{BufferTimeout: 0, FloatingPerGate: 128, BuffersPerWriter: 130}},
	} {
		for _, network := range []bool{false, true} {
			name := "in-process"
			if network {
				name = "network"
			}
			b.Run(tc.name+"/"+name, func(b *testing.B) {
				var conns [2]*nats.Conn
				if network {
					conns = [2]*nats.Conn{na, nb}
				}
				benchExchange(b, tc.cfg, conns)
			})
		}
	}
}

// wire counts what a benchmark publishes.
type wire struct{ bytes, msgs atomic.Int64 }

func (w *wire) count(publish func(string, []byte) error) func(string, []byte) error {
	return func(subj string, data []byte) error {
		w.bytes.Add(int64(len(data)))
		w.msgs.Add(1)
		return publish(subj, data)
	}
}

func benchExchange(b *testing.B, cfg exchange.Config, conns [2]*nats.Conn) {
	ctx := context.Background()
	var (
		w      *exchange.Writer
		g      *exchange.Gate
		sender *Sender
		recv   *Receiver
		out    wire
	)
	if conns[0] == nil {
		e := exchange.NewEdge(cfg, 1, 1)
		w, g = e.Writer(0), exchange.NewGate(cfg, e.Channels(0))
	} else {
		outEdge, inEdge := exchange.NewEdge(cfg, 1, 1), exchange.NewEdge(cfg, 1, 1)
		w, g = outEdge.Writer(0), exchange.NewGate(cfg, inEdge.Channels(0))
		addr := Address{Job: fmt.Sprintf("bench%d", jobs.Add(1)), Run: 1, Edge: "e"}
		var err error
		// The receiver's announcements are counted on its connection's
		// statistics below.
		if recv, err = NewReceiver(conns[1], Config{Exchange: cfg}, Link{Address: addr, Channel: inEdge.Channels(0)[0]}); err != nil {
			b.Fatal(err)
		}
		defer recv.Close()
		if sender, err = NewSender(conns[0], Config{Exchange: cfg, publish: out.count(conns[0].Publish)}, Link{Address: addr, Channel: outEdge.Channels(0)[0]}); err != nil {
			b.Fatal(err)
		}
	}
	var before nats.Statistics
	if conns[1] != nil {
		before = conns[1].Stats()
	}
	stride := max(1, b.N/65536)
	samples := make([]int64, 0, b.N/stride+1)
	done := make(chan int, 1)
	go func() {
		n := 0
		var rec abi.Record
		for {
			buf, err := g.Next(ctx)
			if errors.Is(err, io.EOF) {
				done <- n
				return
			}
			if err != nil {
				b.Error(err)
				done <- n
				return
			}
			now := stamp()
			for buf.Next(&rec) {
				if n%stride == 0 {
					samples = append(samples, now-int64(binary.LittleEndian.Uint64(rec.Value)))
				}
				n++
			}
			buf.Recycle()
		}
	}()
	rec := abi.Record{Key: make([]byte, 8), Value: make([]byte, 100)}
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		binary.LittleEndian.PutUint64(rec.Key, uint64(i))
		binary.LittleEndian.PutUint64(rec.Value, uint64(stamp()))
		if err := w.Emit(ctx, 0, &rec); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(ctx); err != nil {
		b.Fatal(err)
	}
	n := <-done
	elapsed := time.Since(start)
	b.StopTimer()
	if n != b.N {
		b.Fatalf("consumed %d records, want %d", n, b.N)
	}
	if sender != nil {
		if err := sender.Close(ctx); err != nil {
			b.Fatal(err)
		}
		ctl := conns[1].Stats()
		b.ReportMetric(float64(out.bytes.Load()+int64(ctl.OutBytes-before.OutBytes))/float64(b.N), "payload-B/rec")
		b.ReportMetric(float64(out.msgs.Load()+int64(ctl.OutMsgs-before.OutMsgs))/float64(b.N), "msgs/rec")
	}
	slices.Sort(samples)
	pct := func(p float64) float64 { return float64(samples[int(p*float64(len(samples)-1))]) / 1e3 }
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "records/s")
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
}
