package plan

import (
	"reflect"
	"strings"
	"testing"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/spec"
)

// TestWindowTriggers: a window's trigger in the plan, nil when it is the
// default one of the window's clock.
func TestWindowTriggers(t *testing.T) {
	for _, tc := range []struct {
		time, trigger string
		want          *Trigger
	}{
		{"event", "", nil},
		{"event", "{type: event_time}", nil},
		{"ingestion", "{type: event_time}", nil},
		{"processing", "{type: processing_time}", nil},
		{"event", "{type: event_time, purge: true}", &Trigger{Type: TriggerEventTime, Purge: true}},
		{"event", "{type: processing_time}", &Trigger{Type: TriggerProcessingTime}},
		{"event", "{type: count, count: 3}", &Trigger{Type: TriggerCount, Count: 3}},
		{"event", "{type: continuous_event_time, interval: 1m}", &Trigger{Type: TriggerContinuousEventTime, Interval: 60_000}},
		{"processing", "{type: continuous_processing_time, interval: 2s, purge: true}", &Trigger{Type: TriggerContinuousProcessingTime, Interval: 2000, Purge: true}},
	} {
		trigger := ""
		if tc.trigger != "" {
			trigger = ", trigger: " + tc.trigger
		}
		p := build(t, "name: w\ntime: "+tc.time+"\nsources: [{id: s, generator: {kind: clicks, count: 1}}]\n"+
			"operators: [{id: c, input: s, key_by: {field: user}, window: {type: tumbling, size: 1s"+trigger+"}, aggregate: {builtin: count}}]\n"+
			"sinks: [{id: o, input: c, discard: true}]\n")
		if got := p.Vertex("c").Window.Trigger; !reflect.DeepEqual(got, tc.want) {
			t.Errorf("time %s, trigger %s: got %+v, want %+v", tc.time, tc.trigger, got, tc.want)
		}
	}
}

// TestGlobalWindowPlan: a global window keeps its trigger.
func TestGlobalWindowPlan(t *testing.T) {
	p := build(t, "name: w\nsources: [{id: s, generator: {kind: clicks, count: 1}}]\n"+
		"operators: [{id: c, input: s, window_all: {type: global, trigger: {type: count, count: 5, purge: true}}, aggregate: {builtin: count}}]\n"+
		"sinks: [{id: o, input: c, discard: true}]\n")
	w := p.Vertex("c").Window
	if w.Type != WindowGlobal || !reflect.DeepEqual(w.Trigger, &Trigger{Type: TriggerCount, Count: 5, Purge: true}) || !w.All {
		t.Fatalf("window %+v, trigger %+v", w, w.Trigger)
	}
}

// TestWindowEvictors: a window's evictor in the plan.
func TestWindowEvictors(t *testing.T) {
	for _, tc := range []struct {
		evictor string
		want    *Evictor
	}{
		{"{type: count, max: 3}", &Evictor{Type: EvictorCount, Max: 3}},
		{"{type: time, size: 2s, before: false}", &Evictor{Type: EvictorTime, Size: 2000, After: true}},
		{"{type: delta, threshold: 0.5, field: price}", &Evictor{Type: EvictorDelta, Threshold: 0.5, Field: "price"}},
	} {
		j, err := spec.Parse([]byte("name: w\nsources: [{id: s, generator: {kind: clicks, count: 1}}]\n" +
			"operators: [{id: c, input: s, key_by: {field: user}, window: {type: tumbling, size: 1s, evictor: " + tc.evictor + "}, " +
			"process_window: {module: " + testModule + ", function: win}}]\n" +
			"sinks: [{id: o, input: c, discard: true}]\n"))
		if err != nil {
			t.Fatal(err)
		}
		desc := abi.Description{ABI: 1, Functions: []abi.Function{{Name: "win", Kind: abi.KindWindowProcess}}}
		p, err := Build(j, func(id string) (abi.Description, bool) { return desc, id == testModule })
		if err != nil {
			t.Fatal(err)
		}
		w := p.Vertex("c").Window
		if !reflect.DeepEqual(w.Evictor, tc.want) || w.Trigger != nil {
			t.Errorf("%s: evictor %+v, trigger %+v; want %+v and the default trigger", tc.evictor, w.Evictor, w.Trigger, tc.want)
		}
	}
}

// TestCustomTriggerPlan: a custom trigger resolves its function, which must
// be of kind trigger, and is a 400 naming the field otherwise.
func TestCustomTriggerPlan(t *testing.T) {
	desc := abi.Description{ABI: 1, Functions: []abi.Function{{Name: "early", Kind: abi.KindTrigger}, {Name: "parse", Kind: abi.KindMap}}}
	lookupTrig := func(id string) (abi.Description, bool) { return desc, id == testModule }
	job := func(fn string) string {
		return "name: w\nsources: [{id: s, generator: {kind: clicks, count: 1}}]\n" +
			"operators: [{id: c, input: s, key_by: {field: user}, window: {type: tumbling, size: 1s, trigger: {type: custom, module: \"" + testModule + "\", function: " + fn + ", purge: true}}, aggregate: {builtin: count}}]\n" +
			"sinks: [{id: o, input: c, discard: true}]\n"
	}
	j, err := spec.Parse([]byte(job("early")))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Build(j, lookupTrig)
	if err != nil {
		t.Fatal(err)
	}
	want := &Trigger{Type: TriggerCustom, Purge: true, Fn: &Func{Module: testModule, Function: "early", Index: 0}}
	if got := p.Vertex("c").Window.Trigger; !reflect.DeepEqual(got, want) {
		t.Fatalf("trigger %+v, want %+v", got, want)
	}
	// The trigger's module is the job's only one, and each subtask of
	// the window runs a guest of it.
	if got := p.ModuleIDs(); !reflect.DeepEqual(got, []string{testModule}) {
		t.Fatalf("modules %v, want the trigger's", got)
	}
	if got, want := p.Guests(), p.Vertex("c").Parallelism; got != want {
		t.Fatalf("%d guests, want %d", got, want)
	}
	for fn, msg := range map[string]string{
		"parse":   `operators[0].window.trigger.function: "parse" is a map function, want trigger`,
		"missing": `operators[0].window.trigger.function: module ` + testModule + ` has no function "missing" (it has early (trigger), parse (map))`,
	} {
		j, err := spec.Parse([]byte(job(fn)))
		if err != nil {
			t.Fatal(err)
		}
		_, err = Build(j, lookupTrig)
		if err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: error %v, want one containing %q", fn, err, msg)
		}
	}
}
