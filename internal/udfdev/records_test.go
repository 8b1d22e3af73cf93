package udfdev

import (
	"reflect"
	"strings"
	"testing"

	"wasmstream.io/platform/abi"
)

func TestReadRecords(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  []abi.Record
		err   string
	}{
		{"all fields", `{"key": "k", "value": "v", "timestamp": -5, "headers": [{"name": "h", "value": "1"}, {"name": "h", "value": "2"}]}`,
			[]abi.Record{{Key: []byte("k"), Value: []byte("v"), Timestamp: -5, Headers: []abi.Header{
				{Name: []byte("h"), Value: []byte("1")}, {Name: []byte("h"), Value: []byte("2")}}}}, ""},
		{"json value", `{"value": {"user": "ann", "n": [1, 2]}}`, []abi.Record{{Key: []byte{}, Value: []byte(`{"user":"ann","n":[1,2]}`)}}, ""},
		{"number value", `{"value": 42}`, []abi.Record{{Key: []byte{}, Value: []byte("42")}}, ""},
		{"base64", `{"key_base64": "/w==", "value_base64": "AAE="}`, []abi.Record{{Key: []byte{0xff}, Value: []byte{0, 1}}}, ""},
		{"blank lines and empty object", "\n{}\n\n", []abi.Record{{Key: []byte{}}}, ""},
		{"unknown field", `{"valeu": "x"}`, nil, `input line 1: json: unknown field "valeu"`},
		{"not json", "{}\nnope", nil, "input line 2: invalid character 'o' in literal null (expecting 'u')"},
		{"both values", `{"value": "a", "value_base64": "AA=="}`, nil, "input line 1: both value and value_base64"},
		{"both keys", `{"key": "a", "key_base64": "AA=="}`, nil, "input line 1: both key and key_base64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadRecords(strings.NewReader(tt.input))
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}
