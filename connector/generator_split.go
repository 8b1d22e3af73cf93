package connector

import (
	"fmt"
	"slices"
	"strconv"
)

// place sets the splits of the subtask cfg describes and where they resume.
func (g *generator) place(cfg GeneratorConfig) error {
	splits := cfg.Splits
	if splits == 0 {
		splits = cfg.Parallelism
	}
	if splits < cfg.Parallelism {
		return fmt.Errorf("%d splits: want at least the parallelism, %d", splits, cfg.Parallelism)
	}
	g.splits = int64(splits)
	for s := cfg.Subtask; s < splits; s += cfg.Parallelism {
		g.own = append(g.own, int64(s))
		g.pos = append(g.pos, int64(s))
	}
	for name, at := range cfg.Start {
		s, err := strconv.ParseInt(name, 10, 64)
		if err != nil || s < 0 || s >= g.splits {
			return fmt.Errorf("position of split %q: want a split number below %d (did the job's max_parallelism change?)", name, splits)
		}
		if at > uint64(1)<<62 || int64(at)%g.splits != s {
			return fmt.Errorf("position of split %d: index %d is not one of the split's", s, at)
		}
		if i, ok := slices.BinarySearch(g.own, s); ok {
			g.pos[i] = int64(at)
		}
	}
	g.block = slices.Min(g.pos) / g.splits
	g.next = g.block*g.splits + g.own[0]
	if len(cfg.Start) > 0 {
		g.origin = g.next
	}
	return nil
}

// advance moves next to the subtask's following global index.
func (g *generator) advance() {
	g.at++
	if g.at == len(g.own) {
		g.at = 0
		g.block++
	}
	g.next = g.block*g.splits + g.own[g.at]
}

// Positions is the next global index of each of the subtask's splits, by
// split number: what Start takes to resume after the records produced.
func (g *generator) Positions() map[string]uint64 {
	m := make(map[string]uint64, len(g.own))
	for i, s := range g.own {
		m[strconv.FormatInt(s, 10)] = uint64(g.pos[i])
	}
	return m
}
