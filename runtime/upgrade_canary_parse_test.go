package runtime

import (
	"errors"
	"strings"
	"testing"
)

func TestParseKeyGroups(t *testing.T) {
	tests := []struct {
		in          string
		first, last int
		err         string
	}{
		{in: "0-15", first: 0, last: 15},
		{in: " 64 - 127 ", first: 64, last: 127},
		{in: "7", first: 7, last: 7},
		{in: "", err: "give a range of key groups"},
		{in: "a-b", err: `"a-b" is not a range`},
		{in: "1-2-3", err: `"1-2-3" is not a range`},
		{in: "-1", err: `"-1" is not a range`},
		{in: "15-0", err: `"15-0" is reversed`},
		{in: "0-128", err: "outside the job's key groups, 0-127"},
		{in: "128", err: "outside the job's key groups, 0-127"},
	}
	for _, tc := range tests {
		first, last, err := parseKeyGroups(tc.in, 128)
		switch {
		case tc.err == "" && (err != nil || first != tc.first || last != tc.last):
			t.Errorf("parseKeyGroups(%q) = %d, %d, %v; want %d, %d", tc.in, first, last, err, tc.first, tc.last)
		case tc.err != "" && (!errors.Is(err, ErrInvalidJob) || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("parseKeyGroups(%q): %v, want an invalid job with %q", tc.in, err, tc.err)
		}
	}
}

// FuzzParseKeyGroups: whatever the text, a range parsed is inside the job's
// key groups and in order, and formats back to one that parses the same;
// anything else is an invalid job naming canary.key_groups.
func FuzzParseKeyGroups(f *testing.F) {
	for _, s := range []string{"0-15", "7", "", "15-0", "0-128", "a-b", " 1 - 2 ", "-", "1-", "99999999999999999999"} {
		f.Add(s, 128)
	}
	f.Fuzz(func(t *testing.T, s string, maxParallelism int) {
		if maxParallelism < 1 || maxParallelism > 32768 {
			return
		}
		first, last, err := parseKeyGroups(s, maxParallelism)
		if err != nil {
			if !errors.Is(err, ErrInvalidJob) || !strings.Contains(err.Error(), "canary.key_groups: ") {
				t.Fatalf("parseKeyGroups(%q): %v, want an invalid job naming canary.key_groups", s, err)
			}
			return
		}
		if first < 0 || first > last || last >= maxParallelism {
			t.Fatalf("parseKeyGroups(%q) = %d-%d, outside 0-%d or reversed", s, first, last, maxParallelism-1)
		}
		f2, l2, err := parseKeyGroups(formatKeyGroups(first, last), maxParallelism)
		if err != nil || f2 != first || l2 != last {
			t.Fatalf("%q parsed as %d-%d, whose text parses as %d-%d, %v", s, first, last, f2, l2, err)
		}
	})
}
