package udfs

import (
	"context"
	"reflect"
	"testing"

	"wasmstream.io/platform/abi"
)

func TestWordcount(t *testing.T) {
	in := instantiate(t, "wordcount")
	word := func(index uint32, w string) abi.Entry {
		return abi.Entry{Tag: abi.TagRecord, Index: index, Flags: abi.HasKey, Key: []byte(w), Value: []byte(w)}
	}
	tests := []struct {
		name   string
		values []string
		want   []abi.Entry
	}{
		{"words", []string{"Hello, World!"}, []abi.Entry{word(0, "hello"), word(0, "world")}},
		{"unicode", []string{"Straße ÜBER Ελλάδα", "日本語 text"},
			[]abi.Entry{word(0, "straße"), word(0, "über"), word(0, "ελλάδα"), word(1, "日本語"), word(1, "text")}},
		{"punctuation and empty", []string{"...!?", "", "a-b"}, []abi.Entry{word(2, "a"), word(2, "b")}},
		{"digits", []string{"route 66, 4x4s ٣٤"}, []abi.Entry{word(0, "route"), word(0, "66"), word(0, "4x4s"), word(0, "٣٤")}},
		{"no input", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var recs []abi.Record
			for _, v := range tt.values {
				recs = append(recs, abi.Record{Key: []byte("line"), Value: []byte(v), Timestamp: 1700000000000,
					Headers: []abi.Header{{Name: []byte("source"), Value: []byte("web")}}})
			}
			got, err := in.run(context.Background(), "split", recs)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}
