package main

import (
	"testing"

	udf "wasmstream.io/platform/sdk/go"
)

// The native harness's explicit processing time fires the timer of a key
// that went quiet, and not that of a key that received a record since.
func TestReportsQuietKeys(t *testing.T) {
	h := udf.NewHarness("report")
	steps := []struct {
		now  int64
		key  string
		want []string
	}{
		{now: 0, key: "a"},
		{now: 500, key: "b"},
		{now: 900, key: "a"},
		{now: 1500, want: []string{"b: idle v500"}},
		{now: 1899},
		{now: 1900, want: []string{"a: idle v900"}},
		{now: 5000},
	}
	for _, s := range steps {
		got, err := h.SetProcessingTime(s.now)
		if err != nil {
			t.Fatal(err)
		}
		if s.key != "" {
			if _, err := h.Process("watch", []byte(s.key), udf.Record{Value: []byte("v" + itoa(s.now))}); err != nil {
				t.Fatal(err)
			}
		}
		var lines []string
		for _, o := range got {
			lines = append(lines, string(o.Record.Key)+": "+string(o.Record.Value))
		}
		if len(lines) != len(s.want) || len(lines) > 0 && lines[0] != s.want[0] {
			t.Errorf("at %d: fired %q, want %q", s.now, lines, s.want)
		}
	}
}

func itoa(n int64) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}
