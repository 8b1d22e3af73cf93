package exec

import (
	"context"

	"wasmstream.io/platform/connector"
	"wasmstream.io/platform/internal/nexmark"
	"wasmstream.io/platform/runtime/plan"
	"wasmstream.io/platform/runtime/spec"
)

// generator builds subtask i of generator source v, resuming its splits at
// the restored checkpoint's positions. The splits are the job's key groups
// in number, which no parallelism exceeds, so positions carry over when the
// parallelism changes.
func (b *builder) generator(ctx context.Context, v *plan.Vertex, i int) (connector.Source, error) {
	g := v.Source.Generator
	cfg := connector.GeneratorConfig{
		Kind: g.Kind, Rate: g.Rate, Count: g.Count, Keys: g.Keys, Seed: g.Seed,
		Subtask: i, Parallelism: v.Parallelism, Splits: b.j.Plan.Job.MaxParallelism,
		Nexmark: nexmarkConfig(g.Nexmark),
	}
	if b.restore == nil {
		return connector.NewGenerator(cfg)
	}
	start, err := b.restore.positions(ctx, v.ID)
	if err != nil {
		return nil, err
	}
	cfg.Start = start
	src, err := connector.NewGenerator(cfg)
	if err != nil {
		return nil, b.restore.fail(err)
	}
	return src, nil
}

// nexmarkConfig is the model a generator's nexmark block sets; zero fields
// stay zero and take the model's defaults.
func nexmarkConfig(m *spec.NexmarkModel) nexmark.Config {
	if m == nil {
		return nexmark.Config{}
	}
	return nexmark.Config{
		EventRate:         m.EventRate,
		PersonProportion:  m.PersonProportion,
		AuctionProportion: m.AuctionProportion,
		BidProportion:     m.BidProportion,
		HotSellersRatio:   m.HotSellersRatio,
		HotBiddersRatio:   m.HotBiddersRatio,
		HotAuctionsRatio:  m.HotAuctionsRatio,
		ActivePeople:      m.ActivePeople,
		InFlightAuctions:  m.InFlightAuctions,
		OutOfOrderGroup:   m.OutOfOrderGroup,
	}
}
