package spec

import "testing"

func TestLinesOf(t *testing.T) {
	lines := LinesOf([]byte(designSpec))
	for _, tc := range []struct {
		path string
		want int
	}{
		{"name", 2},
		{"sources[1].jetstream.stream", 16},
		{"operators[0].map.module", 22},
		{"operators[0].map.function", 22},
		{"operators[3].join.function.module", 39},
		{"sinks[1].jetstream.subject", 45},
		{"sinks[1].nothing.here", 44},
		{"", 0},
		{"nope", 0},
	} {
		if got := lines.Line(tc.path); got != tc.want {
			t.Errorf("Line(%q) = %d, want %d", tc.path, got, tc.want)
		}
	}
	if got := LinesOf([]byte("[")).Line("name"); got != 0 {
		t.Errorf("a spec that does not parse: line %d", got)
	}
}
