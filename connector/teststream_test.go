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

// A test stream's processing-time steps are passed on as the time they
// advance to, after the records before them, as watermarks are; a restored
// stream starts from the time of the steps its position counts.
func TestTestStreamProcessingTime(t *testing.T) {
	rec := func(v string) TestStep { return TestStep{Record: abi.Record{Value: []byte(v)}} }
	pt := func(ms int64) TestStep { return TestStep{AdvanceProcessingTime: ms} }
	steps := []TestStep{rec("a"), pt(100), rec("b"), rec("c"), pt(50), pt(1), rec("d")}
	tests := []struct {
		name  string
		start map[string]uint64
		now   int64
		want  string
	}{
		{"whole", nil, 0, "[a] pt100 [b c] pt150 pt151 [d] eof"},
		{"restored after the first advance", map[string]uint64{"step": 2}, 100, "[b c] pt150 pt151 [d] eof"},
		{"restored at the end", map[string]uint64{"step": 7}, 151, "eof"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewTestStream(steps, 0, tt.start)
			if got := s.ProcessingTime(); got != tt.now {
				t.Fatalf("processing time %d at the start, want %d", got, tt.now)
			}
			var log []string
			s.SetProcessingTime = func(_ context.Context, now int64) error {
				log = append(log, fmt.Sprintf("pt%d", now))
				return nil
			}
			for range 20 {
				var b abi.Batch
				err := s.Fetch(context.Background(), &b, 10, 0)
				if b.Len() > 0 {
					var recs []string
					for _, r := range b.Records {
						recs = append(recs, string(r.Value))
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
		})
	}
	// Without SetProcessingTime the step fails the stream.
	var b abi.Batch
	if err := NewTestStream(steps[1:], 0, nil).Fetch(context.Background(), &b, 10, 0); !errors.Is(err, errNoClock) {
		t.Fatalf("got %v, want %v", err, errNoClock)
	}
}
