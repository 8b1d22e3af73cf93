package host

import (
	"bytes"
	"context"
	"errors"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"wasmstream.io/platform/abi"
)

// BenchmarkNeighbourBomb is the throughput of a healthy job's guest (the
// WAT upper-case map over frames of 1024 records of 100 bytes, on a Host
// with a budget of testBudget) alone and beside each of three neighbours
// in the same process. The neighbours take turns with pauses between them
// (off, budget, off, no-budget, off, spin, ...), neighbourWindow each, on
// one goroutine, so that no two overlap, and each healthy call counts for
// the neighbour that ran throughout it (or none): every figure comes from
// the same seconds of a shared machine. A slowdown is the throughput alone
// over the throughput beside that neighbour. A turn lasts neighbourWindow
// and longer while a bomb under way ends, so a short -benchtime reaches
// only the first neighbours; 20s gives each of them about ten turns.
//
// The neighbours: "budget" bombs memory over and over on the same Host:
// testdata/bomb.wat grows its memory 1 MiB at a time, touching every page,
// until the budget refuses, traps, and its next call starts a new instance.
// Its memory is a mapping charged to the budget (linearmem.go).
// "no-budget" runs the same bomb straight in wazero with a memory limit of
// testBudget and wazero's own memory, Go slices copied as they grow, as the
// host ran guests before it had a budget: both stop at testBudget.
// "spin" is the floor, a neighbour that only takes a core: calls of a loop
// that never ends, each stopped by its 100 ms deadline. <name>-bombs/s is
// how often a neighbour got to its end while it ran, <name>-heap-MB/bomb
// what the process allocated on the Go heap meanwhile.
func BenchmarkNeighbourBomb(b *testing.B) {
	h := newBudgetHost(b, testBudget)
	p, frame := healthyGuest(b, h)
	neighbours := []neighbour{
		{name: "budget", bomb: budgetBomber(b, h)},
		{name: "no-budget", bomb: rawBomber(b)},
		{name: "spin", bomb: spinner(b, h)},
	}
	sw := startNeighbours(neighbours)
	ctx := context.Background()
	// took and calls are by the neighbour that ran, none last.
	took := make([]time.Duration, len(neighbours)+1)
	calls := make([]int, len(neighbours)+1)
	turn, toggled := 0, time.Now()
	for b.Loop() {
		ran := sw.active.Load()
		start := time.Now()
		if _, err := p.Call(ctx, fnUpper, frame); err != nil {
			b.Fatal(err)
		}
		end := time.Now()
		if sw.active.Load() == ran {
			i := len(neighbours)
			if ran >= 0 {
				i = int(ran)
			}
			took[i] += end.Sub(start)
			calls[i]++
		}
		if end.Sub(toggled) >= neighbourWindow {
			// Even turns are pauses, odd ones the neighbours in order.
			turn, toggled = turn+1, end
			sw.want.Store(-1)
			if turn%2 == 1 {
				sw.want.Store(int32(turn / 2 % len(neighbours)))
			}
		}
	}
	b.StopTimer()
	if err := sw.stop(); err != nil {
		b.Fatal(err)
	}
	rate := func(i int) float64 { return float64(calls[i]*healthyRecords) / took[i].Seconds() }
	if calls[len(neighbours)] == 0 {
		b.Log("no call ran alone: run longer (-benchtime 20s)")
		return
	}
	alone := rate(len(neighbours))
	b.ReportMetric(alone, "alone-records/s")
	for i, n := range neighbours {
		if calls[i] == 0 || n.bombs == 0 {
			b.Logf("%s: %d calls beside it, %d bombs: run longer (-benchtime 20s)", n.name, calls[i], n.bombs)
			continue
		}
		b.ReportMetric(alone/rate(i), n.name+"-slowdown")
		b.ReportMetric(float64(n.bombs)/n.ran.Seconds(), n.name+"-bombs/s")
		b.ReportMetric(float64(n.heap)/float64(n.bombs)/1e6, n.name+"-heap-MB/bomb")
	}
}

// neighbourWindow is how long each turn lasts.
const neighbourWindow = 250 * time.Millisecond

// healthyRecords is the records of a healthy guest's frame.
const healthyRecords = 1024

// healthyGuest is a Guest of the upper-case map on h, with a frame for it,
// called once so that its instance and memory are there before a
// neighbour takes the rest of the budget.
func healthyGuest(tb testing.TB, h *Host) (*Guest, []byte) {
	m := compileFixture(tb, h, "udf")
	p := newPool(tb, m, InstanceConfig{})
	rs := make([]abi.Record, healthyRecords)
	for i := range rs {
		rs[i] = abi.Record{Key: []byte("key"), Value: bytes.Repeat([]byte{'a' + byte(i%26)}, 100), Timestamp: int64(i)}
	}
	frame := inputFrame(rs...)
	if _, err := p.Call(context.Background(), fnUpper, frame); err != nil {
		tb.Fatal(err)
	}
	return p, frame
}

// neighbour is a misbehaving guest: bomb runs it once to its end. bombs,
// ran and heap count its runs, the time it ran and the Go heap the process
// allocated meanwhile.
type neighbour struct {
	name  string
	bomb  func() error
	bombs int
	ran   time.Duration
	heap  uint64
}

// neighbourSwitch runs the neighbour want names (none if negative), one
// bomb after another, on a goroutine of its own. active names the one
// running: it changes only between bombs, so a neighbour asked to stop
// first ends the bomb under way.
type neighbourSwitch struct {
	want, active atomic.Int32
	quit         atomic.Bool
	wg           sync.WaitGroup
	err          error
}

// startNeighbours starts the goroutine, with no neighbour running.
func startNeighbours(ns []neighbour) *neighbourSwitch {
	sw := &neighbourSwitch{}
	sw.want.Store(-1)
	sw.active.Store(-1)
	sw.wg.Go(func() {
		sample := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
		for !sw.quit.Load() {
			w := sw.want.Load()
			sw.active.Store(w)
			if w < 0 {
				time.Sleep(time.Millisecond)
				continue
			}
			n := &ns[w]
			metrics.Read(sample)
			heap, start := sample[0].Value.Uint64(), time.Now()
			if sw.err = n.bomb(); sw.err != nil {
				sw.err = errors.Join(errors.New(n.name), sw.err)
				return
			}
			metrics.Read(sample)
			n.bombs, n.ran, n.heap = n.bombs+1, n.ran+time.Since(start), n.heap+sample[0].Value.Uint64()-heap
		}
	})
	return sw
}

// stop ends the goroutine and returns the error that stopped it, if one
// did.
func (sw *neighbourSwitch) stop() error {
	sw.quit.Store(true)
	sw.wg.Wait()
	return sw.err
}

// budgetBomber is one bomb of a neighbour Guest on h: a call that fails
// once the budget refuses its memory, which discards the instance.
func budgetBomber(tb testing.TB, h *Host) func() error {
	m := compileFixture(tb, h, "bomb")
	p := newPool(tb, m, InstanceConfig{MemoryLimit: bombLimit})
	frame := inputFrame(values("x")...)
	return func() error {
		_, err := p.Call(context.Background(), fnBombTrap, frame)
		if ce := (*CallError)(nil); !errors.As(err, &ce) || ce.Kind != KindMemoryLimit {
			return errors.Join(errors.New("the bomb did not fail as memory_limit"), err)
		}
		return nil
	}
}

// rawBomber is one bomb in a wazero runtime of its own, with wazero's own
// memory and a memory limit of testBudget: an instance that grows until
// the limit, traps and is closed.
func rawBomber(tb testing.TB) func() error {
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler().WithMemoryLimitPages(testBudget/pageSize))
	tb.Cleanup(func() { rt.Close(ctx) })
	code, err := rt.CompileModule(ctx, fixture(tb, "bomb"))
	if err != nil {
		tb.Fatal(err)
	}
	cfg := wazero.NewModuleConfig().WithName("")
	return func() error {
		mod, err := rt.InstantiateModule(ctx, code, cfg)
		if err != nil {
			return err
		}
		_, callErr := mod.ExportedFunction(abi.ExportCall).Call(ctx, api.EncodeU32(fnBombTrap), 0, 0)
		if err := mod.Close(ctx); err != nil {
			return err
		}
		if callErr == nil {
			return errors.New("the bomb returned")
		}
		return nil
	}
}

// spinner is one call of a neighbour Guest on h that loops until its
// deadline of 100 ms stops it.
func spinner(tb testing.TB, h *Host) func() error {
	m := compileFixture(tb, h, "udf")
	p := newPool(tb, m, InstanceConfig{CallTimeout: 100 * time.Millisecond})
	frame := inputFrame(values("x")...)
	return func() error {
		_, err := p.Call(context.Background(), fnSpin, frame)
		if ce := (*CallError)(nil); !errors.As(err, &ce) || ce.Kind != KindDeadline {
			return errors.Join(errors.New("the spin did not fail as deadline"), err)
		}
		return nil
	}
}
