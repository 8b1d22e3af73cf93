package main

import (
	"reflect"
	"testing"

	udf "wasmstream.io/platform/sdk/go"
)

func TestUpper(t *testing.T) {
	headers := []udf.Header{{Name: []byte("h"), Value: []byte("v")}}
	tests := []struct {
		name, value, want string
	}{
		{"letters", "hello World", "HELLO WORLD"},
		{"empty", "", ""},
		{"digits and punctuation", "a1-b2_{z}", "A1-B2_{Z}"},
		{"non-ascii untouched", "straße é", "STRAßE é"},
		{"bytes around the letters", "`az{", "`AZ{"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := []udf.Record{{Key: []byte("k"), Value: []byte(tt.value), Timestamp: 42, Headers: headers}}
			got, err := udf.Invoke("upper", in)
			if err != nil {
				t.Fatal(err)
			}
			want := []udf.Output{{Record: udf.Record{Key: []byte("k"), Timestamp: 42, Headers: headers}}}
			if tt.want != "" {
				want[0].Record.Value = []byte(tt.want)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("got  %+v\nwant %+v", got, want)
			}
		})
	}
}
