package queries

import (
	"slices"
	"strings"
	"testing"
)

func TestNames(t *testing.T) {
	want := []string{"q0", "q1", "q2", "q3", "q4", "q5", "q7", "q8", "q9", "q10", "q11", "q12", "q13",
		"q14", "q15", "q16", "q17", "q18", "q19", "q20", "q21", "q22"}
	if got := Names(); !slices.Equal(got, want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
}

func TestSpec(t *testing.T) {
	p := Params{Module: "nexmark", Events: 10, Seed: 3, Rate: 5, EventRate: 7, Parallelism: 2, Sink: Discard}
	for _, name := range Names() {
		s, err := Spec(name, p)
		if err != nil {
			t.Fatal(err)
		}
		// The header comment names the placeholders as ${...}.
		if strings.Count(s, "${") != 1 || !strings.Contains(s, "count: 10, seed: 3, rate: 5, nexmark: {event_rate: 7}") ||
			!strings.Contains(s, "parallelism: 2\n") || !strings.Contains(s, "discard: true}") {
			t.Fatalf("%s:\n%s", name, s)
		}
	}
	if _, err := Spec("q6", p); err == nil || !strings.Contains(err.Error(), "no spec") {
		t.Fatalf("q6: %v", err)
	}
	p.Events = 0
	if _, err := Spec("q0", p); err == nil {
		t.Fatal("no events is not an error")
	}
}
