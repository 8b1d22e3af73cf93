package watermark

import (
	"testing"

	"wasmstream.io/platform/abi"
)

// step is one valve call: an update (idle nil) or an idleness change.
type step struct {
	channel  int
	wm       int64
	idle     *bool
	combined int64
	advanced bool
}

func idle(b bool) *bool { return &b }

func TestValve(t *testing.T) {
	const none = abi.NoWatermark
	tests := []struct {
		name     string
		channels int
		steps    []step
	}{
		{
			name: "minimum over channels", channels: 2,
			steps: []step{
				{channel: 0, wm: 10, combined: none},
				{channel: 1, wm: 5, combined: 5, advanced: true},
				{channel: 1, wm: 20, combined: 10, advanced: true},
				{channel: 0, wm: 15, combined: 15, advanced: true},
			},
		},
		{
			name: "never backwards", channels: 1,
			steps: []step{
				{channel: 0, wm: 10, combined: 10, advanced: true},
				{channel: 0, wm: 3, combined: 10},
				{channel: 0, wm: 10, combined: 10},
			},
		},
		{
			name: "idle channel does not hold back", channels: 3,
			steps: []step{
				{channel: 0, wm: 10, combined: none},
				{channel: 1, wm: 12, combined: none},
				{channel: 2, idle: idle(true), combined: 10, advanced: true},
				{channel: 0, wm: 30, combined: 12, advanced: true},
			},
		},
		{
			name: "reactivated channel behind is left out until aligned", channels: 2,
			steps: []step{
				{channel: 0, wm: 10, combined: none},
				{channel: 1, idle: idle(true), combined: 10, advanced: true},
				{channel: 0, wm: 20, combined: 20, advanced: true},
				{channel: 1, wm: 15, combined: 20},
				{channel: 0, wm: 40, combined: 40, advanced: true},
				{channel: 1, wm: 25, combined: 40},
				{channel: 1, wm: 45, combined: 40},
				{channel: 0, wm: 50, combined: 45, advanced: true},
				{channel: 0, wm: 60, combined: 45},
				{channel: 1, wm: 55, combined: 55, advanced: true},
			},
		},
		{
			name: "all idle moves to the largest", channels: 2,
			steps: []step{
				{channel: 0, wm: 10, combined: none},
				{channel: 1, wm: 30, combined: 10, advanced: true},
				{channel: 0, idle: idle(true), combined: 30, advanced: true},
				{channel: 1, idle: idle(true), combined: 30},
				{channel: 1, idle: idle(false), combined: 30},
				{channel: 0, idle: idle(false), combined: 30},
				{channel: 0, wm: 40, combined: 30},
				{channel: 1, wm: 35, combined: 35, advanced: true},
			},
		},
		{
			name: "same idleness twice changes nothing", channels: 2,
			steps: []step{
				{channel: 0, idle: idle(false), combined: none},
				{channel: 0, wm: 5, combined: none},
				{channel: 1, idle: idle(true), combined: 5, advanced: true},
				{channel: 1, idle: idle(true), combined: 5},
			},
		},
		{
			name: "end of input", channels: 2,
			steps: []step{
				{channel: 0, wm: MaxWatermark, combined: none},
				{channel: 1, wm: 7, combined: 7, advanced: true},
				{channel: 1, wm: MaxWatermark, combined: MaxWatermark, advanced: true},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := NewValve(tt.channels)
			if v.Current() != none {
				t.Fatalf("Current before any = %d", v.Current())
			}
			for i, s := range tt.steps {
				var c int64
				var adv bool
				if s.idle != nil {
					c, adv = v.SetIdle(s.channel, *s.idle)
				} else {
					c, adv = v.Update(s.channel, s.wm)
				}
				if c != s.combined || adv != s.advanced {
					t.Fatalf("step %d: got (%d, %v), want (%d, %v)", i, c, adv, s.combined, s.advanced)
				}
				if v.Current() != c {
					t.Fatalf("step %d: Current %d, returned %d", i, v.Current(), c)
				}
			}
		})
	}
}

func TestValveIdle(t *testing.T) {
	v := NewValve(2)
	v.SetIdle(0, true)
	if v.Idle() {
		t.Fatal("Idle with one active channel")
	}
	v.SetIdle(1, true)
	if !v.Idle() {
		t.Fatal("not Idle with every channel idle")
	}
	v.Update(0, 1)
	if v.Idle() {
		t.Fatal("Idle after a watermark reactivated a channel")
	}
}
