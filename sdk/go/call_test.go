package udf

import (
	"reflect"
	"strconv"
	"testing"

	"wasmstream.io/platform/abi"
)

func frameOf(recs ...Record) []byte {
	return abi.AppendFrame(nil, recs)
}

// entry is the part of an output entry the tests compare.
type entry struct {
	Tag   abi.Tag
	Index uint32
	Flags abi.RecordFlags
	Text  string
}

func entries(t *testing.T, out []byte, inputs uint32) []entry {
	t.Helper()
	var r abi.OutputReader
	if err := r.Reset(out, inputs); err != nil {
		t.Fatal(err)
	}
	var got []entry
	var e abi.Entry
	for r.Next(&e) {
		got = append(got, entry{e.Tag, e.Index, e.Flags, string(e.Value) + string(e.Message)})
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return got
}

func TestCallRecordFlags(t *testing.T) {
	in := frameOf(rec("k", "abc", 5, "h", "1"))
	tests := []struct {
		name string
		want []entry
	}{
		{"test_upper", []entry{{abi.TagRecord, 0, 0, "ABC"}}},
		{"test_set_all", []entry{{abi.TagRecord, 0, abi.HasKey | abi.HasTimestamp | abi.HasHeaders, "abc"}}},
		{"test_fresh", []entry{{abi.TagRecord, 0, abi.HasKey | abi.HasTimestamp | abi.HasHeaders, "abc"}}},
		{"test_mutate", []entry{{abi.TagRecord, 0, abi.HasKey | abi.HasHeaders, "abc"}}},
		{"test_fields", []entry{{abi.TagRecord, 0, 0, "abc"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCaller(&functions)
			got := entries(t, c.call(uint32(functions.lookup(tt.name)), append([]byte(nil), in...)), 1)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestCallFailsWholeFrame(t *testing.T) {
	upper := uint32(functions.lookup("test_upper"))
	good := frameOf(rec("", "a", 0))
	tests := []struct {
		name  string
		fn    uint32
		frame []byte
		want  string
	}{
		{"unknown function", 1 << 20, good, "udf: no function with index 1048576; the module has " + strconv.Itoa(len(functions.funcs))},
		{"short count", upper, []byte{1, 0}, "malformed frame at byte 0: want 4 bytes, have 2"},
		{"short record", upper, good[:len(good)-1], "malformed frame at byte 21: want 4 bytes, have 3"},
		{"trailing bytes", upper, append(append([]byte(nil), good...), 0), "malformed frame at byte 25: 1 trailing bytes after 1 records"},
		{"missing record", upper, append(frameOf(rec("", "a", 0), rec("", "b", 0))[:4], good[4:]...), "malformed frame at byte 25: want 4 bytes, have 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCaller(&functions)
			got := entries(t, c.call(tt.fn, tt.frame), 1)
			if want := []entry{{abi.TagError, abi.AllRecords, 0, tt.want}}; !reflect.DeepEqual(got, want) {
				t.Fatalf("got %+v, want %+v", got, want)
			}
		})
	}
}
