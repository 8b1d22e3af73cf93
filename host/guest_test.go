package host

import (
	"context"
	"log/slog"
	"testing"
)

func TestIdleInstancesAreReused(t *testing.T) {
	h, rec := newHost(t, "")
	m := compileFixture(t, h, "udf")
	ctx := context.Background()
	frame := inputFrame(values("x")...)
	open := func(n int, cfg InstanceConfig) (pools []*Guest, created int64) {
		for range n {
			p := m.NewGuest(cfg)
			if _, err := p.Call(ctx, fnUpper, frame); err != nil {
				t.Fatal(err)
			}
			pools = append(pools, p)
			created += p.Instantiations()
		}
		return pools, created
	}
	closeAll := func(pools []*Guest) {
		for _, p := range pools {
			if err := p.Close(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}

	first, created := open(6, InstanceConfig{})
	if created != 6 {
		t.Fatalf("first pools created %d instances, want 6", created)
	}
	closeAll(first)
	second, created := open(6, InstanceConfig{})
	if created != 6-maxIdle {
		t.Fatalf("second pools created %d instances, want %d (the rest idle)", created, 6-maxIdle)
	}
	closeAll(second)
	other, created := open(1, InstanceConfig{MemoryLimit: 2 << 20})
	if created != 1 {
		t.Fatalf("a pool of another memory limit created %d instances, want 1", created)
	}
	closeAll(other)

	p := newPool(t, m, InstanceConfig{Attrs: []slog.Attr{slog.String("job", "reuser")}})
	if _, err := p.Call(ctx, fnLog, inputFrame(values("from a reused instance")...)); err != nil {
		t.Fatal(err)
	}
	if n := p.Instantiations(); n != 0 {
		t.Fatalf("instantiations %d, want 0", n)
	}
	if got := rec.matching(map[string]string{"job": "reuser", "function": "log"}); len(got) != 1 || got[0].Message != "from a reused instance" {
		t.Fatalf("logs of the reused instance %+v", got)
	}
}

func TestClosedHostStopsPools(t *testing.T) {
	h, err := New(context.Background(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	m := compileFixture(t, h, "udf")
	p := m.NewGuest(InstanceConfig{})
	if _, err := p.Call(context.Background(), fnUpper, inputFrame(values("x")...)); err != nil {
		t.Fatal(err)
	}
	if err := h.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, err = p.Call(context.Background(), fnUpper, inputFrame(values("x")...))
	if want := "udf[" + m.ID + "]: host closed"; err == nil || err.Error() != want {
		t.Fatalf("error %v, want %q", err, want)
	}
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Compile(context.Background(), fixture(t, "udf")); err == nil || err.Error() != "host: compile "+m.ID+": host closed" {
		t.Fatalf("compile after close: %v", err)
	}
}
