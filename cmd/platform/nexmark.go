package main

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	"wasmstream.io/platform/connector"
	"wasmstream.io/platform/internal/nexmark"
)

func newNexmarkCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "nexmark", Short: "Nexmark benchmark events (docs/NEXMARK.md)"}
	cmd.AddCommand(newNexmarkPublishCommand())
	return cmd
}

// nexmarkPublish holds publish's flags.
type nexmarkPublish struct {
	events          int64
	rate, eventRate int
	seed            int64
	prefix, stream  string
	maxInFlight     int
}

func newNexmarkPublishCommand() *cobra.Command {
	var p nexmarkPublish
	cmd := &cobra.Command{
		Use:   "publish --events N",
		Short: "Publish N Nexmark events into JetStream, creating the stream (NEXMARK) with subjects PREFIX.person, PREFIX.auction and PREFIX.bid",
		Args:  cobra.NoArgs,
	}
	connect := natsFlag(cmd, false)
	f := cmd.Flags()
	f.Int64Var(&p.events, "events", 0, "number of events (required)")
	f.IntVar(&p.rate, "rate", 0, "events per second of processing time; 0 is as fast as possible")
	f.IntVar(&p.eventRate, "event-rate", 0, "events per second of event time (default: --rate, or 100 without one)")
	f.Int64Var(&p.seed, "seed", 0, "seed of the events: the same seed gives the same events")
	f.StringVar(&p.prefix, "subject-prefix", "nexmark", "subjects are PREFIX.person, PREFIX.auction and PREFIX.bid")
	f.StringVar(&p.stream, "stream", "NEXMARK", "the stream to create or update with those subjects")
	f.IntVar(&p.maxInFlight, "max-in-flight", 4096, "publishes awaiting their acknowledgement at most")
	_ = cmd.MarkFlagRequired("events")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if p.events < 1 || p.rate < 0 || p.eventRate < 0 || p.maxInFlight < 1 {
			return fmt.Errorf("--events and --max-in-flight must be at least 1, --rate and --event-rate not negative")
		}
		cfg := nexmark.Config{Count: p.events, Seed: p.seed, EventRate: p.eventRate}
		if cfg.EventRate == 0 {
			cfg.EventRate = p.rate
		}
		g, err := nexmark.New(cfg)
		if err != nil {
			return err
		}
		nc, js, err := connect(cmd.Context())
		if err != nil {
			return err
		}
		defer nc.Close()
		subjects := [3]string{p.prefix + ".person", p.prefix + ".auction", p.prefix + ".bid"}
		if err := connector.EnsureStream(cmd.Context(), js, p.stream, subjects[:]...); err != nil {
			return err
		}
		start := time.Now()
		counts, err := publishNexmark(cmd.Context(), js, g, subjects, p.events, p.rate, p.maxInFlight)
		if err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "published %d events (%d persons, %d auctions, %d bids) to stream %s in %s\n",
			p.events, counts[0], counts[1], counts[2], p.stream, time.Since(start).Round(time.Millisecond))
		return nil
	}
	return cmd
}

// publishNexmark publishes events 0 to n-1 of g to the subject of their
// kind, with at most inFlight unacknowledged, paced at rate events per
// second when rate is positive. It returns the events of each kind.
func publishNexmark(ctx context.Context, js jetstream.JetStream, g *nexmark.Generator, subjects [3]string, n int64, rate, inFlight int) ([3]int64, error) {
	var counts [3]int64
	// A ring of in-flight publishes: slot i%inFlight holds event i's
	// future and payload, reused once it is acknowledged.
	futures := make([]jetstream.PubAckFuture, inFlight)
	bufs := make([][]byte, inFlight)
	wait := func(f jetstream.PubAckFuture) error {
		select {
		case <-f.Ok():
			return nil
		case err := <-f.Err():
			return fmt.Errorf("publish to %s: %w", f.Msg().Subject, err)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	start := time.Now()
	for i := range n {
		slot := i % int64(inFlight)
		if f := futures[slot]; f != nil {
			if err := wait(f); err != nil {
				return counts, err
			}
		}
		if rate > 0 {
			if ahead := time.Duration(float64(i)/float64(rate)*float64(time.Second)) - time.Since(start); ahead > 0 {
				select {
				case <-time.After(ahead):
				case <-ctx.Done():
					return counts, ctx.Err()
				}
			}
		}
		k := g.Kind(i)
		bufs[slot] = g.AppendEvent(bufs[slot][:0], i)
		f, err := js.PublishAsync(subjects[k], bufs[slot])
		if err != nil {
			return counts, fmt.Errorf("publish to %s: %w", subjects[k], err)
		}
		futures[slot] = f
		counts[k]++
	}
	for _, f := range futures {
		if f != nil {
			if err := wait(f); err != nil {
				return counts, err
			}
		}
	}
	return counts, nil
}
