package main

import (
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"wasmstream.io/platform/udfs/nexmark/queries"
)

func newBenchCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "bench", Short: "Benchmarks on an embedded platform (docs/NEXMARK.md)"}
	cmd.AddCommand(newBenchNexmarkCommand())
	return cmd
}

// benchNexmark holds the flags of bench nexmark.
type benchNexmark struct {
	query       string
	events      int64
	parallelism int
	seed        int64
	rate        int
	runs        int
	module      string
	native      bool // the reference only
	platform    bool // the platform only
	cpuProfile  string
}

func newBenchNexmarkCommand() *cobra.Command {
	var b benchNexmark
	cmd := &cobra.Command{
		Use:   "nexmark --query qN --events N",
		Short: "Run a Nexmark query on an embedded platform and its plain-Go reference, and print their rates, CPU, latency and memory",
		Long: "bench nexmark runs query N's job (udfs/nexmark/queries) over N generated events on a platform\n" +
			"in this process (embedded NATS, a discarding sink), then the query's plain-Go reference\n" +
			"(internal/nexmark) over the same events on one goroutine, the native ceiling, and prints for\n" +
			"each run events per second, events per CPU second of the whole process, the peak RSS and the\n" +
			"platform's rate as a share of the ceiling's. With --rate the generator is paced and the job's\n" +
			"sink publishes to NATS, where a subscriber measures the latency from each record's event time\n" +
			"to its arrival (p50, p99). It builds udfs/nexmark with the Go toolchain unless --module names a\n" +
			"built module: run it from the repository root.",
		Args: cobra.NoArgs,
	}
	f := cmd.Flags()
	f.StringVar(&b.query, "query", "", "the query: "+strings.Join(queries.Names(), ", ")+" (required)")
	f.Int64Var(&b.events, "events", 1_000_000, "number of events")
	f.IntVar(&b.parallelism, "parallelism", 1, "the job's parallelism")
	f.Int64Var(&b.seed, "seed", 1, "seed of the events")
	f.IntVar(&b.rate, "rate", 0, "events per second of the generator, also of event time; 0 is as fast as possible (no latency)")
	f.IntVar(&b.runs, "runs", 1, "runs of the platform and of the reference, alternately")
	f.StringVar(&b.module, "module", "", "a built module with the query's functions (default: build udfs/nexmark)")
	f.BoolVar(&b.native, "native-only", false, "run only the plain-Go reference")
	f.BoolVar(&b.platform, "platform-only", false, "run only the platform")
	f.StringVar(&b.cpuProfile, "cpuprofile", "", "write a CPU profile of the runs to this file")
	_ = cmd.MarkFlagRequired("query")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if !slices.Contains(queries.Names(), b.query) {
			return fmt.Errorf("--query %q: want one of %s (docs/NEXMARK.md lists the others and what they wait for)", b.query, strings.Join(queries.Names(), ", "))
		}
		if b.events < 1 || b.parallelism < 1 || b.rate < 0 || b.runs < 1 || b.native && b.platform {
			return fmt.Errorf("--events, --parallelism and --runs must be at least 1, --rate not negative, and at most one of --native-only and --platform-only set")
		}
		if b.cpuProfile != "" {
			f, err := os.Create(b.cpuProfile)
			if err != nil {
				return err
			}
			defer f.Close()
			if err := pprof.StartCPUProfile(f); err != nil {
				return err
			}
			defer pprof.StopCPUProfile()
		}
		// Ctrl-C or a SIGTERM stops the job and removes the platform's
		// temporary directory.
		ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		cmd.SetContext(ctx)
		return runBenchNexmark(cmd, b)
	}
	return cmd
}

// benchResult is what one run measured.
type benchResult struct {
	wall, cpu, startup time.Duration
	// queryWall and queryCPU are the native reference's own time, without
	// making the events.
	queryWall, queryCPU time.Duration
	rows                int64
	peakRSS             int64
	// latencies are the sink records' latencies, when measured.
	latencies []time.Duration
}

func (r benchResult) perWall(events int64) float64 { return float64(events) / r.wall.Seconds() }
func (r benchResult) perCPU(events int64) float64  { return float64(events) / r.cpu.Seconds() }

func runBenchNexmark(cmd *cobra.Command, b benchNexmark) error {
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "nexmark %s: %d events, seed %d, parallelism %d, rate %s\n", b.query, b.events, b.seed, b.parallelism, rateText(b.rate))
	// The platform's runs come first, so that the peak RSS they report is
	// theirs: the reference holds every event in memory.
	var plat, native []benchResult
	if !b.native {
		p, err := startBenchPlatform(cmd.Context(), b.module)
		if err != nil {
			return err
		}
		for run := 1; run <= b.runs; run++ {
			r, err := p.run(cmd.Context(), b)
			if err != nil {
				p.stop()
				return err
			}
			plat = append(plat, r)
			fmt.Fprintf(out, "platform run %d: %s\n", run, describe(r, b.events))
		}
		p.stop()
	}
	if !b.platform {
		for run := 1; run <= b.runs; run++ {
			r, err := runNativeNexmark(b, len(plat) == 0)
			if err != nil {
				return err
			}
			native = append(native, r)
			fmt.Fprintf(out, "native run %d: %s\n", run, describe(r, b.events))
		}
	}
	if len(plat) > 0 && len(native) > 0 {
		var cpu, wall []float64
		for i := range plat {
			cpu = append(cpu, plat[i].perCPU(b.events)/native[i].perCPU(b.events))
			wall = append(wall, plat[i].perWall(b.events)/native[i].perWall(b.events))
		}
		fmt.Fprintf(out, "wasm/native: %s per CPU-s, %s per wall-s (median %.2f per CPU-s)\n", ratios(cpu), ratios(wall), median(cpu))
	}
	if b.runs > 1 {
		fmt.Fprintln(out, medians(b.events, plat, native))
	}
	return nil
}

// ratios formats ratios with two decimals.
func ratios(vs []float64) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = fmt.Sprintf("%.2f", v)
	}
	return strings.Join(s, ", ")
}

func median(vs []float64) float64 {
	vs = slices.Clone(vs)
	slices.Sort(vs)
	if len(vs)%2 == 1 {
		return vs[len(vs)/2]
	}
	return (vs[len(vs)/2-1] + vs[len(vs)/2]) / 2
}

// medians is the median of each rate over the runs.
func medians(events int64, plat, native []benchResult) string {
	rates := func(rs []benchResult, f func(benchResult, int64) float64) string {
		var vs []float64
		for _, r := range rs {
			vs = append(vs, f(r, events))
		}
		return si(median(vs))
	}
	line := "median:"
	if len(plat) > 0 {
		line += fmt.Sprintf(" platform %s events/s, %s events/CPU-s", rates(plat, benchResult.perWall), rates(plat, benchResult.perCPU))
	}
	if len(native) > 0 {
		line += fmt.Sprintf("; native %s events/s, %s events/CPU-s", rates(native, benchResult.perWall), rates(native, benchResult.perCPU))
	}
	return line
}

func rateText(rate int) string {
	if rate == 0 {
		return "unpaced"
	}
	return fmt.Sprintf("%d events/s", rate)
}

// describe formats a run's figures.
func describe(r benchResult, events int64) string {
	s := fmt.Sprintf("%s events/s, %s events/CPU-s, %d rows", si(r.perWall(events)), si(r.perCPU(events)), r.rows)
	if r.queryCPU > 0 {
		s += fmt.Sprintf(" (the query alone %s events/CPU-s)", si(float64(events)/r.queryCPU.Seconds()))
	}
	if r.startup > 0 {
		s += fmt.Sprintf(", startup %s", r.startup.Round(time.Millisecond))
	}
	if r.latencies != nil && len(r.latencies) == 0 {
		s += ", no latency (every result came at the end of the input)"
	}
	if len(r.latencies) > 0 {
		s += fmt.Sprintf(", latency p50 %s p99 %s", percentile(r.latencies, 0.50), percentile(r.latencies, 0.99))
	}
	if r.peakRSS > 0 {
		s += fmt.Sprintf(", peak RSS %d MiB", r.peakRSS>>20)
	}
	return s
}

// si formats a rate with a K or M suffix.
func si(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.2fM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.1fK", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

// percentile is the p-th latency of ls (sorted here).
func percentile(ls []time.Duration, p float64) time.Duration {
	slices.Sort(ls)
	i := int(p * float64(len(ls)-1))
	return ls[i].Round(100 * time.Microsecond)
}

// benchDir is a temporary directory for the platform's data.
func benchDir() (string, func(), error) {
	dir, err := os.MkdirTemp("", "platform-bench-")
	if err != nil {
		return "", nil, err
	}
	return dir, func() { os.RemoveAll(dir) }, nil
}
