package host

import (
	"context"
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"wasmstream.io/platform/abi"
)

func TestGuestLog(t *testing.T) {
	h, rec := newHost(t, "")
	m := compileFixture(t, h, "udf")
	p := newPool(t, m, InstanceConfig{Attrs: []slog.Attr{slog.String("job", "j1"), slog.Int("subtask", 3)}})
	long := strings.Repeat("x", maxLine+10)
	input := []abi.Record{
		{Value: []byte("debug line"), Timestamp: int64(abi.LogDebug)},
		{Value: []byte("info line"), Timestamp: int64(abi.LogInfo)},
		{Value: []byte("warn line"), Timestamp: int64(abi.LogWarn)},
		{Value: []byte("error line"), Timestamp: int64(abi.LogError)},
		{Value: []byte("below range"), Timestamp: -5},
		{Value: []byte("above range"), Timestamp: 9},
		{Value: []byte(long), Timestamp: int64(abi.LogInfo)},
	}
	if _, err := p.Call(context.Background(), fnLog, inputFrame(input...)); err != nil {
		t.Fatal(err)
	}
	base := map[string]string{"module": m.ID, "function": "log", "job": "j1", "subtask": "3"}
	with := func(extra map[string]string) map[string]string {
		attrs := map[string]string{}
		for k, v := range base {
			attrs[k] = v
		}
		for k, v := range extra {
			attrs[k] = v
		}
		return attrs
	}
	want := []logRecord{
		{slog.LevelDebug, "debug line", base},
		{slog.LevelInfo, "info line", base},
		{slog.LevelWarn, "warn line", base},
		{slog.LevelError, "error line", base},
		{slog.LevelDebug, "below range", base},
		{slog.LevelError, "above range", base},
		{slog.LevelInfo, long[:maxLine], with(map[string]string{"truncated_bytes": "10"})},
	}
	if got := rec.matching(map[string]string{"module": m.ID}); !reflect.DeepEqual(got, want) {
		t.Fatalf("logs\n%+v\nwant\n%+v", got, want)
	}
}

// TestGuestLogOutsideMemory: a message whose location is outside guest
// memory traps the call (docs/ABI.md); what was logged before stays, and
// the next call runs on a fresh instance.
func TestGuestLogOutsideMemory(t *testing.T) {
	h, rec := newHost(t, "")
	m := compileFixture(t, h, "udf")
	p := newPool(t, m, InstanceConfig{})
	input := inputFrame(
		abi.Record{Value: []byte("before"), Timestamp: int64(abi.LogInfo)},
		abi.Record{Key: []byte("bad"), Value: []byte("location outside memory")}, // logs [-16, 48)
		abi.Record{Value: []byte("after"), Timestamp: int64(abi.LogInfo)},
	)
	_, err := p.Call(context.Background(), fnLog, input)
	var ce *CallError
	if !errors.As(err, &ce) || ce.Kind != KindTrap || ce.Function != "log" {
		t.Fatalf("error %v, want a trap in log", err)
	}
	want := "platform.log: [4294967280, 4294967344) is outside memory of 131072 bytes (recovered by wazero)\n"
	if msg := ce.Err.Error(); !strings.HasPrefix(msg, want) {
		t.Fatalf("error %q, want it to begin with %q", msg, want)
	}
	got := rec.matching(map[string]string{"module": m.ID})
	if len(got) != 1 || got[0].Message != "before" {
		t.Fatalf("logs %+v, want only \"before\"", got)
	}
	if _, err := p.Call(context.Background(), fnLog, inputFrame(abi.Record{Value: []byte("again"), Timestamp: int64(abi.LogInfo)})); err != nil {
		t.Fatal(err)
	}
	if n := p.Instantiations(); n != 2 {
		t.Fatalf("%d instantiations, want 2", n)
	}
}

func TestGuestOutput(t *testing.T) {
	h, rec := newHost(t, "")
	m := compileFixture(t, h, "udf")
	p := m.NewGuest(InstanceConfig{Attrs: []slog.Attr{slog.String("job", "j2")}})
	long := strings.Repeat("y", maxLine+5)
	input := []abi.Record{
		{Value: []byte("hello\nwor")},
		{Value: []byte("ld\n\n")},
		{Key: []byte("e"), Value: []byte("oops\n")},
		{Value: []byte(long + "\n")},
		{Value: []byte("partial")},
	}
	if _, err := p.Call(context.Background(), fnPrint, inputFrame(input...)); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	attrs := func(stream string) map[string]string {
		return map[string]string{"module": m.ID, "function": "print", "stream": stream, "job": "j2"}
	}
	want := []logRecord{
		{slog.LevelInfo, "hello", attrs("stdout")},
		{slog.LevelInfo, "world", attrs("stdout")},
		{slog.LevelWarn, "oops", attrs("stderr")},
		{slog.LevelInfo, long[:maxLine], attrs("stdout")},
		{slog.LevelInfo, long[maxLine:], attrs("stdout")},
		{slog.LevelInfo, "partial", attrs("stdout")},
	}
	if got := rec.matching(map[string]string{"module": m.ID}); !reflect.DeepEqual(got, want) {
		t.Fatalf("logs\n%+v\nwant\n%+v", got, want)
	}
}
