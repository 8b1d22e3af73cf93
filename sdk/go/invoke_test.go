package udf

import (
	"reflect"
	"testing"
)

func rec(key, value string, ts int64, headers ...string) Record {
	r := Record{Timestamp: ts}
	if key != "" {
		r.Key = []byte(key)
	}
	if value != "" {
		r.Value = []byte(value)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		r.Headers = append(r.Headers, Header{Name: []byte(headers[i]), Value: []byte(headers[i+1])})
	}
	return r
}

func TestInvoke(t *testing.T) {
	in := []Record{rec("k", "abc", 5, "h", "1"), rec("", "bad", -1), rec("", "a,!,b", 0)}
	tests := []struct {
		name string
		in   []Record
		want []Output
	}{
		{"test_upper", in, []Output{
			{0, rec("k", "ABC", 5, "h", "1"), "", ""},
			{1, rec("", "BAD", -1), "", ""},
			{2, rec("", "A,!,B", 0), "", ""},
		}},
		{"test_set_all", in[:1], []Output{{0, rec("k2", "abc", 7, "x", "y"), "", ""}}},
		{"test_fresh", in[:1], []Output{{0, rec("", "abc", 0), "", ""}}},
		{"test_mutate", in[:1], []Output{{0, rec("X", "abc", 5, "h", "Y"), "", ""}}},
		{"test_fail", in, []Output{
			{0, rec("k", "abc", 5, "h", "1"), "", ""},
			{1, Record{}, "bad value", ""},
			{2, rec("", "a,!,b", 0), "", ""},
		}},
		{"test_panic", []Record{rec("", "boom", 0), rec("", "index", 0), rec("", "ok", 1)}, []Output{
			{0, Record{}, "panic: boom", ""},
			{1, Record{}, "panic: runtime error: index out of range [10] with length 5", ""},
			{2, rec("", "ok", 1), "", ""},
		}},
		{"test_filter", []Record{rec("", "apple", 1), rec("", "pear", 2), rec("", "err", 3), rec("", "avocado", 4, "h", "v")}, []Output{
			{0, rec("", "apple", 1), "", ""},
			{2, Record{}, "cannot decide", ""},
			{3, rec("", "avocado", 4, "h", "v"), "", ""},
		}},
		{"test_fields", []Record{rec("k", "x,y", 9, "h", "1"), rec("", "a,!,b", 0), rec("", "", 3), rec("", "c,?", 4), rec("", "d", 5)}, []Output{
			{0, rec("k", "x", 9, "h", "1"), "", ""},
			{0, rec("k", "y", 9, "h", "1"), "", ""},
			{1, Record{}, "bad field", ""},
			{2, rec("", "", 3), "", ""},
			{3, Record{}, "panic: question", ""},
			{4, rec("", "d", 5), "", ""},
		}},
		{"test_key", []Record{rec("old", "value", 1), rec("old", "", 2)}, []Output{
			{0, rec("v", "value", 1), "", ""},
			{1, Record{}, "empty value", ""},
		}},
		{"test_ts", []Record{rec("", "1700000000000", 1), rec("", "-3", 2), rec("", "x", 3)}, []Output{
			{0, rec("", "1700000000000", 1700000000000), "", ""},
			{1, rec("", "-3", -3), "", ""},
			{2, Record{}, `strconv.ParseInt: parsing "x": invalid syntax`, ""},
		}},
		{"test_upper", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Invoke(tt.name, tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestInvokeLeavesInputUnchanged(t *testing.T) {
	in := []Record{rec("k", "abc", 5, "h", "1")}
	if _, err := Invoke("test_mutate", in); err != nil {
		t.Fatal(err)
	}
	if want := []Record{rec("k", "abc", 5, "h", "1")}; !reflect.DeepEqual(in, want) {
		t.Fatalf("input changed to %+v", in)
	}
}

func TestInvokeUnknownFunction(t *testing.T) {
	_, err := Invoke("nope", nil)
	if err == nil || err.Error() != `udf: no function "nope" is registered` {
		t.Fatalf("err = %v", err)
	}
}

func TestStrayEmitPanics(t *testing.T) {
	if _, err := Invoke("test_keep_emit", []Record{rec("", "x", 0)}); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if p := recover(); p != "udf: emit called after its function returned" {
			t.Fatalf("recovered %v", p)
		}
	}()
	strayEmit(rec("", "y", 0))
}
