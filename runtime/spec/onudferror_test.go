package spec

import (
	"encoding/json"
	"testing"
)

// TestOnUDFErrorJSON: a bare policy is written as its name, as a spec
// gives it, and a quarantine as an object; both read back the same.
func TestOnUDFErrorJSON(t *testing.T) {
	tests := []struct {
		in   OnUDFError
		want string
	}{
		{OnUDFError{Policy: "fail"}, `"fail"`},
		{OnUDFError{Policy: "dead_letter"}, `"dead_letter"`},
		{OnUDFError{Policy: "quarantine", After: 3}, `{"policy":"quarantine","after":3}`},
		{OnUDFError{Policy: "quarantine", After: 1, Budget: 4096}, `{"policy":"quarantine","after":1,"budget":4096}`},
	}
	for _, tt := range tests {
		got, err := json.Marshal(tt.in)
		if err != nil || string(got) != tt.want {
			t.Errorf("%+v: got %s (%v), want %s", tt.in, got, err, tt.want)
			continue
		}
		j, err := Parse([]byte(minimalSpec + `on_udf_error: ` + string(got) + "\n" + deadLetterFor(tt.in)))
		if err != nil {
			t.Errorf("%s: %v", got, err)
			continue
		}
		if j.OnUDFError != tt.in {
			t.Errorf("%s read back as %+v", got, j.OnUDFError)
		}
	}
}

func deadLetterFor(o OnUDFError) string {
	if o.Policy == "dead_letter" || o.Policy == "quarantine" {
		return "dead_letter_subject: dead\n"
	}
	return ""
}
