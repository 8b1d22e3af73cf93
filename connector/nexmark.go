package connector

import "wasmstream.io/platform/internal/nexmark"

// newNexmark is the Nexmark model of a generator source: cfg.Nexmark with
// the source's count and seed, and the source's rate as its events per
// second of event time unless cfg.Nexmark sets one.
func newNexmark(cfg GeneratorConfig) (*nexmark.Generator, error) {
	c := cfg.Nexmark
	c.Count, c.Seed = cfg.Count, cfg.Seed
	if c.EventRate == 0 && cfg.Rate > 0 {
		c.EventRate = cfg.Rate
	}
	return nexmark.New(c)
}

// nexmarkValue is the JSON of the Nexmark event at index n (docs/NEXMARK.md).
func nexmarkValue(g *generator, dst []byte, n, _ int64) []byte {
	return g.nexmark.AppendEvent(dst, n)
}
