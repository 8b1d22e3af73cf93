package host

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"wasmstream.io/platform/abi"
)

// TestGuestLogRateLimit: the udf fixture's log function logs every record
// of its input in a loop; past 100 lines in a second of the clock the lines
// are dropped, and the next line allowed, or Close, first says how many.
func TestGuestLogRateLimit(t *testing.T) {
	h, rec := newHost(t, "")
	m := compileFixture(t, h, "udf")
	p := m.NewGuest(InstanceConfig{Attrs: []slog.Attr{slog.String("job", "j1")}})
	clock := time.Unix(1700000000, 0)
	p.limiter.now = func() time.Time { return clock }
	lines := func(n int, prefix string) []byte {
		recs := make([]abi.Record, n)
		for i := range recs {
			recs[i] = abi.Record{Value: fmt.Appendf(nil, "%s %d", prefix, i), Timestamp: int64(abi.LogInfo)}
		}
		return inputFrame(recs...)
	}
	if _, err := p.Call(context.Background(), fnLog, lines(250, "first")); err != nil {
		t.Fatal(err)
	}
	got := rec.matching(map[string]string{"module": m.ID})
	if len(got) != DefaultLogLinesPerSecond || got[0].Message != "first 0" || got[99].Message != "first 99" {
		t.Fatalf("%d lines (first %q), want the first 100", len(got), got[0].Message)
	}
	// Still the same second: nothing more.
	if _, err := p.Call(context.Background(), fnLog, lines(5, "same second")); err != nil {
		t.Fatal(err)
	}
	if got := rec.matching(map[string]string{"module": m.ID}); len(got) != 100 {
		t.Fatalf("%d lines, want still 100", len(got))
	}
	clock = clock.Add(time.Second)
	if _, err := p.Call(context.Background(), fnLog, lines(2, "second")); err != nil {
		t.Fatal(err)
	}
	got = rec.matching(map[string]string{"module": m.ID})[100:]
	want := []logRecord{
		{slog.LevelWarn, "155 lines dropped", map[string]string{"module": m.ID, "function": "log", "job": "j1", "dropped": "155", "lines_per_second": "100"}},
		{slog.LevelInfo, "second 0", map[string]string{"module": m.ID, "function": "log", "job": "j1"}},
		{slog.LevelInfo, "second 1", map[string]string{"module": m.ID, "function": "log", "job": "j1"}},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after a second\n%+v\nwant\n%+v", got, want)
	}
	// Lines dropped and never followed by an allowed one are reported on
	// Close.
	if _, err := p.Call(context.Background(), fnLog, lines(100, "third")); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	got = rec.matching(map[string]string{"module": m.ID})
	if last := got[len(got)-1]; len(got) != 103+98+1 || last.Message != "2 lines dropped" || last.Level != slog.LevelWarn {
		t.Fatalf("%d lines, last %+v; want 202 ending with 2 lines dropped", len(got), last)
	}
}

// TestGuestLogNoLimit: a negative LogLinesPerSecond lets every line through.
func TestGuestLogNoLimit(t *testing.T) {
	h, rec := newHost(t, "")
	m := compileFixture(t, h, "udf")
	p := newPool(t, m, InstanceConfig{LogLinesPerSecond: -1})
	recs := make([]abi.Record, 300)
	for i := range recs {
		recs[i] = abi.Record{Value: []byte("x"), Timestamp: int64(abi.LogInfo)}
	}
	if _, err := p.Call(context.Background(), fnLog, inputFrame(recs...)); err != nil {
		t.Fatal(err)
	}
	if got := rec.matching(map[string]string{"module": m.ID}); len(got) != 300 {
		t.Fatalf("%d lines, want 300", len(got))
	}
}
