package spec

import (
	"encoding/json"
	"testing"
)

func TestDurationJSON(t *testing.T) {
	for _, tc := range []struct {
		d    Duration
		json string
	}{
		{dur("100ms"), `"100ms"`},
		{dur("0s"), `"0s"`},
		{dur("-1ms"), `"-1ms"`},
		{dur("90s"), `"1m30s"`},
	} {
		b, err := json.Marshal(tc.d)
		if err != nil || string(b) != tc.json {
			t.Errorf("Marshal(%v) = %s, %v; want %s", tc.d, b, err, tc.json)
		}
		var back Duration
		if err := json.Unmarshal(b, &back); err != nil || back != tc.d {
			t.Errorf("Unmarshal(%s) = %v, %v; want %v", b, back, err, tc.d)
		}
	}
}

func TestDurationUnmarshalErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`"5x"`, `invalid duration "5x"`},
		{`100`, `duration: want a string like "100ms", got 100`},
	} {
		var d Duration
		if err := json.Unmarshal([]byte(tc.in), &d); err == nil || err.Error() != tc.want {
			t.Errorf("Unmarshal(%s): got %v, want %s", tc.in, err, tc.want)
		}
	}
}
