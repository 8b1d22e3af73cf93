package udfdev

import (
	"strings"
	"testing"
)

// FuzzReadInput: any input either fails with an error naming its line or
// reads as records and steps that Run accepts: in order, within the
// records, each one thing.
func FuzzReadInput(f *testing.F) {
	for _, seed := range []string{
		`{"key": "a", "value": {"amount": 5}, "timestamp": 1}`,
		`{"broadcast": {"value": {"rule": "big", "min": 100}}}` + "\n" + `{"key": "u1"}`,
		`{"watermark": 5}` + "\n" + `{"processing_time": 9}` + "\n" + `{"broadcast": {"key_base64": "/w=="}}`,
		`{"broadcast": {"value": 1}, "watermark": 2}`,
		`{"broadcast": 3}`,
		`{"watermark": 5, "processing_time": 1}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, input string) {
		recs, steps, err := ReadInput(strings.NewReader(input))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "input line ") && !strings.HasPrefix(err.Error(), "read input") {
				t.Fatalf("error %q names no line", err)
			}
			return
		}
		if err := checkSteps(steps, len(recs)); err != nil {
			t.Fatalf("ReadInput gave steps Run refuses: %v", err)
		}
	})
}
