package connector

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"wasmstream.io/platform/abi"
)

// A test stream plays its records in batches that end at each watermark,
// passes each watermark on only after the records before it, and resumes
// after the steps its position counts.
func TestTestStream(t *testing.T) {
	wm := func(n int64) TestStep { return TestStep{Watermark: &n} }
	rec := func(v string, ts int64) TestStep {
		return TestStep{Record: abi.Record{Value: []byte(v), Timestamp: ts}}
	}
	steps := []TestStep{rec("a", 1), rec("b", 2), rec("c", 3), wm(5), wm(6), rec("d", 7), wm(9)}
	tests := []struct {
		name    string
		subtask int
		start   map[string]uint64
		max     int
		want    string
	}{
		{"whole", 0, nil, 10, "[a@1 b@2 c@3] wm5 wm6 [d@7] wm9 eof"},
		{"small batches", 0, nil, 2, "[a@1 b@2] [c@3] wm5 wm6 [d@7] wm9 eof"},
		{"restored", 0, map[string]uint64{"step": 4}, 10, "wm6 [d@7] wm9 eof"},
		{"other subtask", 1, nil, 10, "eof"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var log []string
			s := NewTestStream(steps, tt.subtask, tt.start)
			s.Advance = func(_ context.Context, wm int64) error {
				log = append(log, fmt.Sprintf("wm%d", wm))
				return nil
			}
			for range 20 {
				var b abi.Batch
				err := s.Fetch(context.Background(), &b, tt.max, 0)
				if b.Len() > 0 {
					var recs []string
					for _, r := range b.Records {
						recs = append(recs, fmt.Sprintf("%s@%d", r.Value, r.Timestamp))
					}
					log = append(log, "["+strings.Join(recs, " ")+"]")
				}
				if errors.Is(err, io.EOF) {
					log = append(log, "eof")
					break
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			if got := strings.Join(log, " "); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
			if n := s.Positions()["step"]; n != uint64(len(s.steps)) {
				t.Errorf("position %d at the end, want %d", n, len(s.steps))
			}
		})
	}
}
