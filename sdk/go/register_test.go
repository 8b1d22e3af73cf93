package udf

import (
	"testing"

	"wasmstream.io/platform/abi"
)

func noop(r Record) (Record, error) { return r, nil }

func TestDescribe(t *testing.T) {
	tests := []struct {
		name  string
		funcs []string
		want  string
	}{
		{"empty", nil, `{"abi":1,"functions":[]}`},
		{"two", []string{"split", "count"}, `{"abi":1,"functions":[{"name":"split","kind":"flat_map"},{"name":"count","kind":"flat_map"}]}`},
		{"escapes", []string{"q\"b\\n\n\x01é"}, `{"abi":1,"functions":[{"name":"q\"b\\n\u000a\u0001é","kind":"flat_map"}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var g registry
			for _, name := range tt.funcs {
				g.add(function{name: name, kind: abi.KindFlatMap, flatMapFn: func(Record, func(Record)) error { return nil }})
			}
			if got := string(g.describe()); got != tt.want {
				t.Fatalf("got %s, want %s", got, tt.want)
			}
			d, err := abi.ParseDescription(g.describe())
			if err != nil {
				t.Fatal(err)
			}
			for i, name := range tt.funcs {
				if d.Functions[i] != (abi.Function{Name: name, Kind: abi.KindFlatMap}) {
					t.Errorf("function %d decodes as %+v", i, d.Functions[i])
				}
			}
		})
	}
}

func TestRegisterPanics(t *testing.T) {
	tests := []struct {
		name     string
		register func()
		want     string
	}{
		{"duplicate", func() {
			var g registry
			g.add(function{name: "f", kind: abi.KindMap, mapFn: noop})
			g.add(function{name: "f", kind: abi.KindFilter, filterFn: func(Record) (bool, error) { return true, nil }})
		}, `udf: function "f" registered twice (as map, then as filter)`},
		{"empty name", func() {
			var g registry
			g.add(function{kind: abi.KindMap, mapFn: noop})
		}, "udf: a function needs a non-empty name"},
		{"invalid utf-8", func() {
			var g registry
			g.add(function{name: "a\xff", kind: abi.KindMap, mapFn: noop})
		}, `udf: function name "a\xff" is not valid UTF-8`},
		{"nil map", func() { Map("m", nil) }, `udf: function "m" is nil`},
		{"nil filter", func() { Filter("f", nil) }, `udf: function "f" is nil`},
		{"nil flat map", func() { FlatMap("fm", nil) }, `udf: function "fm" is nil`},
		{"nil key", func() { Key("k", nil) }, `udf: function "k" is nil`},
		{"nil timestamp", func() { Timestamp("ts", nil) }, `udf: function "ts" is nil`},
		{"registered name", func() { Map("test_upper", noop) },
			`udf: function "test_upper" registered twice (as map, then as map)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if p := recover(); p != tt.want {
					t.Fatalf("recovered %v, want %q", p, tt.want)
				}
			}()
			tt.register()
		})
	}
}
