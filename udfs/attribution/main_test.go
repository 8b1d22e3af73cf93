package main

import (
	"testing"

	udf "wasmstream.io/platform/sdk/go"
)

func TestCredit(t *testing.T) {
	tests := []struct {
		name, pair, want string
	}{
		{
			"same ad is credited",
			`{"key":"u1","left":{"user":"u1","ad":3,"ts":1000},"right":{"user":"u1","ad":3,"ts":3500}}`,
			`{"user":"u1","ad":3,"impression_ts":1000,"click_ts":3500,"delay_ms":2500}`,
		},
		{"another ad is not", `{"key":"u1","left":{"user":"u1","ad":3,"ts":1000},"right":{"user":"u1","ad":4,"ts":1200}}`, ""},
		{"bad JSON fails", `{"left":`, "error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			outs, err := udf.Invoke("credit", []udf.Record{{Key: []byte("u1"), Value: []byte(tt.pair), Timestamp: 3500}})
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			for _, o := range outs {
				switch {
				case o.Err != "":
					got = "error"
				case o.Record.Timestamp != 3500 || string(o.Record.Key) != "u1":
					t.Fatalf("record %+v does not keep the pair's key and timestamp", o.Record)
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
