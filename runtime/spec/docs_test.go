package spec

import (
	"os"
	"regexp"
	"testing"
)

// TestDocExamples parses every YAML and JSON example of docs/JOBS.md.
func TestDocExamples(t *testing.T) {
	doc, err := os.ReadFile("../../docs/JOBS.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```(?:yaml|json)\n(.*?)```").FindAllSubmatch(doc, -1)
	if len(blocks) != 7 {
		t.Fatalf("found %d examples, want 7", len(blocks))
	}
	for _, b := range blocks {
		if _, err := Parse(b[1]); err != nil {
			t.Errorf("example does not parse: %v\n%s", err, b[1])
		}
	}
}
