package udfdev

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/internal/wasmbuild"
)

// TestRunProcessAcrossLanguages runs the dedup process function of every
// SDK language and of WebAssembly text with the in-memory state, and checks
// the outputs and the state Run prints.
func TestRunProcessAcrossLanguages(t *testing.T) {
	h := []abi.Header{{Name: []byte("h"), Value: []byte("x")}}
	in := []abi.Record{
		{Key: []byte("a"), Value: []byte("1"), Timestamp: 10},
		{Key: []byte("b"), Value: []byte("2"), Timestamp: 11, Headers: h},
		{Key: []byte("a"), Value: []byte("3"), Timestamp: 12},
		{Key: []byte("c"), Value: []byte("4"), Timestamp: 13},
		{Key: []byte("c"), Value: []byte("5"), Timestamp: 14},
		{Key: []byte("b"), Value: []byte("6"), Timestamp: 15},
	}
	// An output names the group's last record as its input: in batches of
	// four, a's first record is emitted for the group of records 0 and 2.
	const state = `{"state":"seen","key":"a","value":"\u0001"}
{"state":"seen","key":"b","value":"\u0001"}
{"state":"seen","key":"c","value":"\u0001"}
`
	wants := map[int]string{
		1: `{"input":0,"key":"a","value":"1","timestamp":10}
{"input":1,"key":"b","value":"2","timestamp":11,"headers":[{"name":"h","value":"x"}]}
{"input":3,"key":"c","value":"4","timestamp":13}
` + state,
		4: `{"input":2,"key":"a","value":"1","timestamp":10}
{"input":1,"key":"b","value":"2","timestamp":11,"headers":[{"name":"h","value":"x"}]}
{"input":3,"key":"c","value":"4","timestamp":13}
` + state,
	}
	for _, module := range []string{"dedup", "dedup-rust", "dedup-c", "dedup-as", "dedup-wat"} {
		for batch, want := range wants {
			var out bytes.Buffer
			if err := Run(context.Background(), wasmbuild.UDF(t, module), in, &out, Options{Function: "dedup", BatchSize: batch}); err != nil {
				t.Fatalf("%s: %v", module, err)
			}
			if out.String() != want {
				t.Errorf("%s, batches of %d: got\n%s\nwant\n%s", module, batch, out.String(), want)
			}
		}
	}
	// The Pebble backend holds the same state.
	var out bytes.Buffer
	if err := Run(context.Background(), wasmbuild.UDF(t, "dedup"), in, &out, Options{Function: "dedup", BatchSize: 4, State: "pebble"}); err != nil {
		t.Fatal(err)
	}
	if out.String() != wants[4] {
		t.Errorf("pebble: got\n%s\nwant\n%s", out.String(), wants[4])
	}
}

// TestRunOnTimer runs the fraud detector (udfs/fraud) with and without its
// on_timer function: the timer a small transaction registers fires at the
// end of the input and clears the account's state.
func TestRunOnTimer(t *testing.T) {
	fraud := wasmbuild.UDF(t, "fraud")
	in, err := ReadRecords(strings.NewReader(`{"key": "acct1", "value": {"amount": 0.5}, "timestamp": 1000}
{"key": "acct2", "value": {"amount": 700}, "timestamp": 2000}
{"key": "acct2", "value": {"amount": 0.1}, "timestamp": 3000}
{"key": "acct2", "value": {"amount": 900}, "timestamp": 4000}
`))
	if err != nil {
		t.Fatal(err)
	}
	const alert = `{"input":3,"key":"acct2","value":"{\"account\":\"acct2\",\"ts\":4000,\"amount\":900.00}","timestamp":4000}
`
	tests := []struct {
		onTimer string
		want    string
	}{
		{"", alert + `{"state":"small","key":"acct1","value_base64":"SO4AAAAAAAA="}
{"timer":"event","key":"acct1","timestamp":61000}
`},
		{"expire", alert},
	}
	for _, tt := range tests {
		var out bytes.Buffer
		if err := Run(context.Background(), fraud, in, &out, Options{Function: "detect", OnTimer: tt.onTimer}); err != nil {
			t.Fatal(err)
		}
		if out.String() != tt.want {
			t.Errorf("on_timer %q: got\n%s\nwant\n%s", tt.onTimer, out.String(), tt.want)
		}
	}
	for _, bad := range []Options{{Function: "detect", OnTimer: "detect"}, {Function: "detect", OnTimer: "nope"}} {
		if err := Run(context.Background(), fraud, in, &bytes.Buffer{}, bad); err == nil || !strings.Contains(err.Error(), "no on_timer function") {
			t.Errorf("%+v: error %v", bad, err)
		}
	}
}
