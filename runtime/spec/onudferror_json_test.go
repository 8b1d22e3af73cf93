package spec

import (
	"encoding/json"
	"testing"
)

// TestOnUDFErrorJSONRoundTrip: both forms come back as they went.
func TestOnUDFErrorJSONRoundTrip(t *testing.T) {
	tests := []struct {
		in   OnUDFError
		json string
	}{
		{OnUDFError{Policy: "skip"}, `"skip"`},
		{OnUDFError{Policy: "quarantine", After: 3, Budget: 1024}, `{"policy":"quarantine","after":3,"budget":1024}`},
	}
	for _, tt := range tests {
		data, err := json.Marshal(tt.in)
		if err != nil || string(data) != tt.json {
			t.Fatalf("marshal %+v: %s %v, want %s", tt.in, data, err, tt.json)
		}
		var back OnUDFError
		if err := json.Unmarshal(data, &back); err != nil || back != tt.in {
			t.Fatalf("unmarshal %s: %+v %v, want %+v", data, back, err, tt.in)
		}
	}
}
