package record

import (
	"context"
	"testing"

	"wasmstream.io/platform/host"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/operator/optest"
	"wasmstream.io/platform/watermark"
)

// TestPunctuatedWatermarks runs the heartbeat watermark function of
// udfs/sessions in a source.
func TestPunctuatedWatermarks(t *testing.T) {
	mod := optest.Module(t, "sessions")
	out := &optest.Tape{}
	c := &operator.ErrorCounts{}
	g := watermark.NewGenerator(watermark.Punctuated, 0, 200, 0, func(context.Context, bool) error { return nil }, out)
	g.SetSplits(1)
	fn := mod.Description.Lookup("heartbeat")
	g.Punct = NewPunctuator(mod.ID, "heartbeat", fn, mod.NewGuest(host.InstanceConfig{}), 2,
		&operator.ErrorPolicy{Mode: operator.OnErrorFail, Vertex: "src", Counts: c})
	t.Cleanup(func() { _ = g.Close(context.Background()) })
	steps := optest.Step(`k@5 {"a":1}; k@9 {"heartbeat":true}; k@7 {"b":2}; k@20 {"heartbeat":false}; k@30 {"heartbeat":true}`)
	if err := steps.Apply(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	optest.CheckLines(t, "output", out.Lines, []string{
		`k@5 {"a":1}`, `k@9 {"heartbeat":true}`, "wm 9", `k@7 {"b":2}`, `k@20 {"heartbeat":false}`, `k@30 {"heartbeat":true}`, "wm 30",
	})
	if c.UDFErrors.Load() != 0 {
		t.Fatal("udf errors")
	}
}
