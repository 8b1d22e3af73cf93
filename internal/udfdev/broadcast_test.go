package udfdev

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"wasmstream.io/platform/internal/wasmbuild"
)

// TestRunBroadcast runs udfs/rules as a broadcast_process operator: rule
// lines update the broadcast state, which every keyed record after them
// reads, a rule the function fails is reported by its number among the
// broadcast records (keyed records count on their own), and the keyed and
// broadcast states are printed at the end.
func TestRunBroadcast(t *testing.T) {
	const input = `{"broadcast": {"value": {"rule": "big", "min": 100}}}
{"key": "u1", "value": {"amount": 50}, "timestamp": 1}
{"key": "u1", "value": {"amount": 150}, "timestamp": 2}
{"broadcast": {"value": {"rule": "any", "min": 0}}}
{"broadcast": {"value": {"min": 3}}}
{"key": "u2", "value": {"amount": 120}, "timestamp": 3}
{"broadcast": {"value": {"rule": "big"}}}
{"key": "u1", "value": {"amount": 500}, "timestamp": 4}
{"key": "u2", "value": {"note": "x"}, "timestamp": 5}
`
	const want = `{"input":1,"key":"u1","value":"{\"user\":\"u1\",\"rule\":\"big\",\"amount\":150,\"hits\":1}","timestamp":2}
{"broadcast_input":2,"error":"no string field \"rule\""}
{"input":2,"key":"u2","value":"{\"user\":\"u2\",\"rule\":\"any\",\"amount\":120,\"hits\":1}","timestamp":3}
{"input":2,"key":"u2","value":"{\"user\":\"u2\",\"rule\":\"big\",\"amount\":120,\"hits\":2}","timestamp":3}
{"input":3,"key":"u1","value":"{\"user\":\"u1\",\"rule\":\"any\",\"amount\":500,\"hits\":2}","timestamp":4}
{"input":4,"error":"no integer field \"amount\""}
{"state":"hits","key":"u1","value":"2"}
{"state":"hits","key":"u2","value":"2"}
{"broadcast_state":"rules","map_key":"any","value":"0"}
`
	recs, steps, err := ReadInput(strings.NewReader(input))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Run(context.Background(), wasmbuild.UDF(t, "rules"), recs, &out, Options{Function: "match", Broadcast: "update", BatchSize: 1, Steps: steps}); err != nil {
		t.Fatal(err)
	}
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}

// TestRunBroadcastRefusals checks the errors of broadcast runs set up
// wrong.
func TestRunBroadcastRefusals(t *testing.T) {
	wasm := wasmbuild.UDF(t, "rules")
	recs, steps, err := ReadInput(strings.NewReader(`{"broadcast": {"value": {"rule": "big", "min": 100}}}
{"key": "u1", "value": {"amount": 50}}
`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		opt  Options
		want string
	}{
		{"no --broadcast", Options{Function: "match", Steps: steps}, "broadcast record 0 (before input 0): broadcast lines go with --broadcast"},
		{"not a process_broadcast function", Options{Function: "match", Broadcast: "match", Steps: steps}, `the module has no process_broadcast function "match"`},
		{"keyed side not a process function", Options{Function: "update", Broadcast: "update", Steps: steps}, `function "update" is a process_broadcast function`},
		{"keyed state from the broadcast side", Options{Function: "match", Broadcast: "peek", Steps: steps}, "peek"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Run(context.Background(), wasm, recs, &bytes.Buffer{}, tt.opt)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error with %q", err, tt.want)
			}
		})
	}
	// A broadcast line has only its record.
	if _, _, err := ReadInput(strings.NewReader(`{"broadcast": {"value": "x"}, "key": "a"}`)); err == nil || !strings.Contains(err.Error(), "input line 1: a broadcast line has only the field broadcast") {
		t.Errorf("got %v", err)
	}
}
