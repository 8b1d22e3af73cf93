package abi

import (
	"reflect"
	"testing"
)

func TestEntryApply(t *testing.T) {
	h := []Header{{Name: []byte("h"), Value: []byte("1")}}
	in := Record{Key: []byte("k"), Value: []byte("v"), Timestamp: 5, Headers: h}
	h2 := []Header{{Name: []byte("x"), Value: []byte("2")}}
	tests := []struct {
		name string
		e    Entry
		want Record
	}{
		{"a record entry sets only the value by default", Entry{Tag: TagRecord, Value: []byte("w")}, Record{Key: []byte("k"), Value: []byte("w"), Timestamp: 5, Headers: h}},
		{"a record entry sets what its flags say", Entry{Tag: TagRecord, Flags: HasKey | HasTimestamp | HasHeaders, Key: []byte("k2"), Value: []byte("w"), Timestamp: 9, Headers: h2},
			Record{Key: []byte("k2"), Value: []byte("w"), Timestamp: 9, Headers: h2}},
		{"a flagged empty key replaces the key", Entry{Tag: TagRecord, Flags: HasKey, Value: nil}, Record{Key: nil, Timestamp: 5, Headers: h}},
		{"a key entry", Entry{Tag: TagKey, Key: []byte("k3")}, Record{Key: []byte("k3"), Value: []byte("v"), Timestamp: 5, Headers: h}},
		{"a timestamp entry", Entry{Tag: TagTimestamp, Timestamp: -1}, Record{Key: []byte("k"), Value: []byte("v"), Timestamp: -1, Headers: h}},
		{"a keep entry passes the input", Entry{Tag: TagKeep}, in},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.e.Apply(&in); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestKindAnswers(t *testing.T) {
	answers := map[Kind]Tag{KindMap: TagRecord, KindFlatMap: TagRecord, KindFilter: TagKeep, KindKey: TagKey, KindTimestamp: TagTimestamp}
	for _, k := range []Kind{KindMap, KindFlatMap, KindFilter, KindKey, KindTimestamp, KindProcess, KindAggregate} {
		for _, tag := range []Tag{TagRecord, TagError, TagKeep, TagKey, TagTimestamp, TagAccumulator, TagWatermark} {
			want, ok := answers[k]
			if got := k.Answers(tag); got != (ok && want == tag) {
				t.Errorf("%s answers %d: %v", k, tag, got)
			}
		}
	}
}
