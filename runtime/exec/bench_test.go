package exec

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/connector"
	"wasmstream.io/platform/host"
	"wasmstream.io/platform/internal/wasmbuild"
	"wasmstream.io/platform/runtime/exchange"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/operator/optest"
	"wasmstream.io/platform/runtime/operator/record"
)

// nativeUpper is the native Go twin of the `upper` UDF: the ceiling a Wasm
// map is measured against.
type nativeUpper struct {
	next    operator.Stage
	out     []abi.Record
	scratch []byte
}

func (n *nativeUpper) Process(ctx context.Context, recs []abi.Record) error {
	n.out = n.out[:0]
	n.scratch = n.scratch[:0]
	for i := range recs {
		start := len(n.scratch)
		for _, c := range recs[i].Value {
			if c >= 'a' && c <= 'z' {
				c -= 'a' - 'A'
			}
			n.scratch = append(n.scratch, c)
		}
		r := recs[i]
		r.Value = n.scratch[start:len(n.scratch):len(n.scratch)]
		n.out = append(n.out, r)
	}
	return n.next.Process(ctx, n.out)
}

func (n *nativeUpper) Advance(ctx context.Context, wm int64) error { return n.next.Advance(ctx, wm) }
func (n *nativeUpper) Tick(ctx context.Context, now int64) error   { return n.next.Tick(ctx, now) }
func (n *nativeUpper) Finish(ctx context.Context) error            { return n.next.Finish(ctx) }
func (n *nativeUpper) Close(ctx context.Context) error             { return n.next.Close(ctx) }

var (
	benchHostOnce sync.Once
	benchHost     *host.Host
)

func compileUDF(b *testing.B, name string) *host.Module {
	b.Helper()
	benchHostOnce.Do(func() {
		var err error
		benchHost, err = host.New(context.Background(), host.Config{})
		if err != nil {
			b.Fatal(err)
		}
	})
	mod, err := benchHost.Compile(context.Background(), wasmbuild.UDF(b, name))
	if err != nil {
		b.Fatal(err)
	}
	return mod
}

func generator(b *testing.B, n int) connector.Source {
	b.Helper()
	src, err := connector.NewGenerator(connector.GeneratorConfig{Kind: "sequence", Count: int64(n), Parallelism: 1})
	if err != nil {
		b.Fatal(err)
	}
	return src
}

// runChain runs generator -> chain -> optest.Count for b.N records.
func runChain(b *testing.B, batch int, chain func(next operator.Stage) operator.Stage) {
	b.Helper()
	sink := &optest.Count{}
	t := &Task{name: "bench", batchSize: batch, source: generator(b, b.N), chain: chain(sink)}
	b.ResetTimer()
	if err := t.run(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	if sink.N != int64(b.N) {
		b.Fatalf("%d records arrived, want %d", sink.N, b.N)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkChainedMap measures generator -> chained map -> sink on one
// goroutine for the Wasm UDF in Go (udfs/upper) and in WAT (udfs/upper-wat)
// against the same map in native Go, at several batch sizes.
func BenchmarkChainedMap(b *testing.B) {
	for _, batch := range []int{1, 64, 1024} {
		b.Run(fmt.Sprintf("native/batch=%d", batch), func(b *testing.B) {
			runChain(b, batch, func(next operator.Stage) operator.Stage { return &nativeUpper{next: next} })
		})
		for _, udf := range []string{"upper-wat", "upper"} {
			b.Run(fmt.Sprintf("%s/batch=%d", udf, batch), func(b *testing.B) {
				mod := compileUDF(b, udf)
				runChain(b, batch, func(next operator.Stage) operator.Stage {
					return record.NewFunction(abi.KindMap, mod.ID, "upper", mod.Description.Lookup("upper"), mod.NewGuest(host.InstanceConfig{}), batch,
						&operator.ErrorPolicy{Mode: operator.OnErrorFail, Counts: &operator.ErrorCounts{}}, next)
				})
			})
		}
	}
}

// BenchmarkExchangeEdge measures records/s across one non-chained edge: a
// generator task sending through the credit-based exchange to a task that
// counts.
func BenchmarkExchangeEdge(b *testing.B) {
	for _, timeout := range []string{"-1ms", "1ms"} {
		b.Run("buffer_timeout="+timeout, func(b *testing.B) {
			cfg := exchange.Config{BufferTimeout: mustDuration(timeout)}
			edge := exchange.NewEdge(cfg, 1, 1)
			producer := &Task{name: "producer", batchSize: 1024, source: generator(b, b.N),
				chain: &exchangeOut{writer: edge.Writer(0), part: exchange.Forward(0)}}
			sink := &optest.Count{}
			consumer := &Task{name: "consumer", gate: exchange.NewGate(cfg, edge.Channels(0)), chain: sink}
			b.ResetTimer()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if err := runTasks(ctx, cancel, []*Task{producer, consumer}); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if sink.N != int64(b.N) {
				b.Fatalf("%d records arrived, want %d", sink.N, b.N)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

func mustDuration(s string) time.Duration {
	d, err := time.ParseDuration(s)
	if err != nil {
		panic(err)
	}
	return d
}
