package main

import (
	"testing"

	udf "wasmstream.io/platform/sdk/go"
)

func TestEnrich(t *testing.T) {
	order := udf.Record{Value: []byte(`{"order":"o1","user":"u1","amount":5,"ts":2000}`), Timestamp: 2000}
	tests := []struct {
		name, profile, want string
	}{
		{"tier is added", `{"user":"u1","tier":"gold","ts":1000}`, `{"order":{"order":"o1","user":"u1","amount":5,"ts":2000},"tier":"gold"}`},
		{"empty tier", `{"tier":"","user":"u1"}`, `{"order":{"order":"o1","user":"u1","amount":5,"ts":2000},"tier":""}`},
		{"no tier fails", `{"user":"u1"}`, "error"},
		{"unterminated tier fails", `{"tier":"gol`, "error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			profile := udf.Record{Value: []byte(tt.profile), Timestamp: 1000}
			outs, err := udf.InvokeIntervalJoin("enrich", []byte("u1"), order, []udf.Record{profile})
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			for _, o := range outs {
				switch {
				case o.Err != "":
					got = "error"
				case o.Record.Timestamp != 2000 || string(o.Record.Key) != "u1":
					t.Fatalf("record %+v does not keep the key and the later timestamp", o.Record)
				default:
					got = string(o.Record.Value)
				}
			}
			if got != tt.want {
				t.Fatalf("got %s, want %s", got, tt.want)
			}
		})
	}
}
