// Package queries holds the job specs of the Nexmark queries that run on the
// platform (one qN.yaml each, over the generator source kind nexmark and
// the functions of udfs/nexmark) and fills in their placeholders, for the
// end-to-end tests and `platform bench nexmark`. docs/NEXMARK.md lists the
// queries and how each runs.
package queries

import (
	"embed"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

//go:embed *.yaml
var files embed.FS

// Params are the values of a spec's placeholders.
type Params struct {
	// Module is the id (or name) of the uploaded udfs/nexmark module.
	Module string
	// Events, Seed and Rate configure the generator source: its count,
	// seed and rate (0: as fast as possible). EventRate is its events per
	// second of event time (0: the rate, or 100 without one).
	Events, Seed    int64
	Rate, EventRate int
	// Parallelism is the job's parallelism.
	Parallelism int
	// Sink is the sink's kind and configuration, as YAML members: Discard
	// or JetStream(subject).
	Sink string
}

// Discard is a sink that counts its records and drops them.
const Discard = "discard: true"

// JetStream is a sink that publishes its records to subject.
func JetStream(subject string) string { return "jetstream: {subject: " + subject + "}" }

// Names are the queries with a spec, in their order: q0, q1, ..., q22.
func Names() []string {
	entries, _ := files.ReadDir(".")
	var names []string
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	slices.SortFunc(names, func(a, b string) int { return number(a) - number(b) })
	return names
}

// number is the number of the query qN.
func number(name string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(name, "q"))
	return n
}

// Spec returns the spec of the query name ("q5") with p's values.
func Spec(name string, p Params) (string, error) {
	text, err := files.ReadFile(name + ".yaml")
	if err != nil {
		return "", fmt.Errorf("nexmark query %q: no spec (the queries with one: %s)", name, strings.Join(Names(), ", "))
	}
	if p.Module == "" || p.Events < 1 || p.Rate < 0 || p.EventRate < 0 || p.Parallelism < 1 || p.Sink == "" {
		return "", fmt.Errorf("nexmark query %s: module, sink, at least one event and a parallelism of at least 1 are needed, and rates not negative", name)
	}
	return strings.NewReplacer(
		"${MODULE}", p.Module,
		"${EVENTS}", strconv.FormatInt(p.Events, 10),
		"${SEED}", strconv.FormatInt(p.Seed, 10),
		"${RATE}", strconv.Itoa(p.Rate),
		"${EVENT_RATE}", strconv.Itoa(p.EventRate),
		"${PARALLELISM}", strconv.Itoa(p.Parallelism),
		"${SINK}", p.Sink,
	).Replace(string(text)), nil
}
