package udfdev

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/internal/wasmbuild"
)

func TestRunWindowKinds(t *testing.T) {
	avg := wasmbuild.UDF(t, "avg-c")
	windowkinds := wasmbuild.UDF(t, "windowkinds-c")
	click := func(user string, amount string, ts int64) abi.Record {
		return abi.Record{Key: []byte(user), Value: []byte(`{"amount":` + amount + `}`), Timestamp: ts}
	}
	clicks := []abi.Record{click("u1", "3", 1_000), click("u2", "10", 2_000), click("u1", "5", 9_999), click("u1", "oops", 3_000), click("u1", "7", 10_000), click("u2", "1", -1)}
	beats := []abi.Record{
		{Key: []byte("a"), Value: []byte("x"), Timestamp: 1_000},
		{Key: []byte("a"), Value: []byte("beat"), Timestamp: 2_000},
		{Key: []byte("b"), Value: []byte("!"), Timestamp: 2_500},
		{Key: []byte("a"), Value: []byte("xyz"), Timestamp: 2_500},
		{Key: []byte("b"), Value: []byte("xy"), Timestamp: 9_000},
		{Key: []byte("a"), Value: []byte("x"), Timestamp: 4_000},
	}
	tests := []struct {
		name, function string
		module         []byte
		in             []abi.Record
		batch          int
		want           string
	}{
		// The window operator folds a batch's records of a window in one add
		// call; when the call fails the window, each of its records goes to
		// on_udf_error, so each is written, in the order it came.
		{"aggregate", "avg", avg, clicks, 0, `{"window":{"start":0,"end":10000},"error":"\"amount\" is not a number","key":"u1","value":"{\"amount\":3}","timestamp":1000}
{"window":{"start":0,"end":10000},"error":"\"amount\" is not a number","key":"u1","value":"{\"amount\":5}","timestamp":9999}
{"window":{"start":0,"end":10000},"error":"\"amount\" is not a number","key":"u1","value":"{\"amount\":oops}","timestamp":3000}
{"window":{"start":-10000,"end":0},"key":"u2","value":"{\"key\":\"u2\",\"window_start\":-10000,\"window_end\":0,\"avg\":1,\"count\":1}","timestamp":-1}
{"window":{"start":0,"end":10000},"key":"u2","value":"{\"key\":\"u2\",\"window_start\":0,\"window_end\":10000,\"avg\":10,\"count\":1}","timestamp":9999}
{"window":{"start":10000,"end":20000},"key":"u1","value":"{\"key\":\"u1\",\"window_start\":10000,\"window_end\":20000,\"avg\":7,\"count\":1}","timestamp":19999}
`},
		{"aggregate one window a call", "count", avg, clicks[:3], 1, `{"window":{"start":0,"end":10000},"key":"u1","value":"2","timestamp":9999}
{"window":{"start":0,"end":10000},"key":"u2","value":"1","timestamp":9999}
`},
		{"reduce", "largest", avg, clicks[:3], 0, `{"window":{"start":0,"end":10000},"key":"u1","value":"{\"amount\":5}","timestamp":9999}
{"window":{"start":0,"end":10000},"key":"u2","value":"{\"amount\":10}","timestamp":9999}
`},
		// The window operator reports the windows a call failed before it
		// passes the call's results on.
		{"window_process", "summary", windowkinds, beats[:4], 0, `{"window":{"start":0,"end":10000},"error":"bad record","key":"b"}
{"window":{"start":0,"end":10000},"key":"a","value":"a:0:10000:3","timestamp":9999}
{"window":{"start":0,"end":10000},"key":"v","value":"x","timestamp":7}
{"window":{"start":0,"end":10000},"key":"v","value":"beat","timestamp":7}
{"window":{"start":0,"end":10000},"key":"v","value":"xyz","timestamp":7}
`},
		// The window operator's error for a record whose gap failed does
		// not carry the function's message.
		{"session_gap", "gap", windowkinds, beats, 2, `{"input":0,"gap":1000}
{"input":1,"gap":4000}
{"input":2,"error":"session gap failed"}
{"input":3,"gap":3000}
{"input":4,"gap":2000}
{"input":5,"gap":1000}
{"window":{"start":1000,"end":6000},"key":"a","records":4}
{"window":{"start":9000,"end":11000},"key":"b","records":1}
`},
		// The punctuator's error for a failed record is the function's
		// message after "error: ".
		{"watermark", "beat", windowkinds, beats, 0, `{"input":1,"watermark":2000}
{"input":2,"error":"error: bad beat"}
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			opt := Options{Function: tt.function, BatchSize: tt.batch}
			if tt.module != nil && (tt.function == "avg" || tt.function == "count" || tt.function == "largest" || tt.function == "summary") {
				opt.Window = 10 * time.Second
			}
			if err := Run(context.Background(), tt.module, tt.in, &out, opt); err != nil {
				t.Fatal(err)
			}
			if out.String() != tt.want {
				t.Fatalf("got\n%s\nwant\n%s", out.String(), tt.want)
			}
		})
	}
}

func TestRunWindowOptionErrors(t *testing.T) {
	avg := wasmbuild.UDF(t, "avg-c")
	tests := []struct {
		function string
		window   time.Duration
		want     string
	}{
		{"avg", 0, "give their size with --window"},
		{"avg", -time.Second, "give their size with --window"},
	}
	for _, tt := range tests {
		err := Run(context.Background(), avg, nil, &bytes.Buffer{}, Options{Function: tt.function, Window: tt.window})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s with window %v: %v, want an error with %q", tt.function, tt.window, err, tt.want)
		}
	}
	kinds := wasmbuild.UDF(t, "kinds-c")
	err := Run(context.Background(), kinds, nil, &bytes.Buffer{}, Options{Function: "swap", Window: time.Second})
	if err == nil || !strings.Contains(err.Error(), "--window goes with") {
		t.Errorf("swap with a window: %v", err)
	}
}

func TestRunWindowProcessWithState(t *testing.T) {
	for _, module := range []string{"firings", "firings-c"} {
		t.Run(module, func(t *testing.T) {
			firings := wasmbuild.UDF(t, module)
			in := []abi.Record{
				{Key: []byte("a"), Timestamp: 1_000},
				{Key: []byte("a"), Timestamp: 12_000},
				{Key: []byte("b"), Timestamp: 3_000},
				{Key: []byte("a"), Timestamp: 4_000},
			}
			var out, pebble bytes.Buffer
			if err := Run(context.Background(), firings, in, &out, Options{Function: "count", Window: 10 * time.Second}); err != nil {
				t.Fatal(err)
			}
			if err := Run(context.Background(), firings, in, &pebble, Options{Function: "count", Window: 10 * time.Second, State: "pebble"}); err != nil {
				t.Fatal(err)
			}
			want := `{"window":{"start":0,"end":10000},"key":"a","value":"a [0,10000) firing 1: 2 records","timestamp":9999}
{"window":{"start":0,"end":10000},"key":"b","value":"b [0,10000) firing 1: 1 records","timestamp":9999}
{"window":{"start":10000,"end":20000},"key":"a","value":"a [10000,20000) firing 1: 1 records","timestamp":19999}
{"state":"fired","key":"a","window":{"start":0,"end":10000},"value":"\u0001\u0000\u0000\u0000\u0000\u0000\u0000\u0000"}
{"state":"fired","key":"a","window":{"start":10000,"end":20000},"value":"\u0001\u0000\u0000\u0000\u0000\u0000\u0000\u0000"}
{"state":"fired","key":"b","window":{"start":0,"end":10000},"value":"\u0001\u0000\u0000\u0000\u0000\u0000\u0000\u0000"}
`
			if out.String() != want {
				t.Fatalf("got\n%s\nwant\n%s", out.String(), want)
			}
			if pebble.String() != want {
				t.Fatalf("pebble: got\n%s\nwant\n%s", pebble.String(), want)
			}
			err := Run(context.Background(), firings, in, &bytes.Buffer{}, Options{Function: "rearm", Window: 10 * time.Second})
			if err == nil || !strings.Contains(err.Error(), "no timers") {
				t.Fatalf("rearm: %v, want the timer refused", err)
			}
		})
	}
}
