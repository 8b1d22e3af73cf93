package udf

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func init() {
	AsyncRequest("test_lookup_ask", func(r Record, ask *Lookups) error {
		switch v := string(r.Value); {
		case v == "bad":
			return errors.New("bad record")
		case v == "many":
			for range 65 {
				ask.KV("b", "k")
			}
		case strings.HasPrefix(v, "http:"):
			ask.HTTPGet("http://127.0.0.1/" + v[5:])
		default:
			ask.KV("users", v)
			ask.KV("names", v)
		}
		return nil
	})
	AsyncResult("test_lookup_join", func(r Record, results []LookupResult, emit func(Record)) error {
		v := string(r.Value) + "="
		for _, res := range results {
			if !res.Found {
				v += "?"
				continue
			}
			v += string(res.Value) + ";"
		}
		if v == "skip=?;" {
			return nil
		}
		emit(Record{Key: r.Key, Value: []byte(v), Timestamp: r.Timestamp})
		return nil
	})
}

func TestInvokeLookup(t *testing.T) {
	answer := func(kind LookupKind, target, key string) (LookupResult, error) {
		if kind == LookupHTTP {
			return LookupResult{Found: true, Value: []byte("GET " + target)}, nil
		}
		if key == "u2" && target == "names" {
			return LookupResult{}, nil
		}
		return LookupResult{Found: true, Value: []byte(target + ":" + key)}, nil
	}
	in := []Record{
		{Key: []byte("a"), Value: []byte("u1"), Timestamp: 1},
		{Value: []byte("bad"), Timestamp: 2},
		{Value: []byte("u2"), Timestamp: 3},
		{Value: []byte("http:x"), Timestamp: 4},
		{Value: []byte("many"), Timestamp: 5},
	}
	got, err := InvokeLookup("test_lookup_ask", "test_lookup_join", in, answer)
	if err != nil {
		t.Fatal(err)
	}
	want := []Output{
		{Index: 0, Record: Record{Key: []byte("a"), Value: []byte("u1=users:u1;names:u1;"), Timestamp: 1}},
		{Index: 1, Err: "bad record"},
		{Index: 2, Record: Record{Value: []byte("u2=users:u2;?"), Timestamp: 3}},
		{Index: 3, Record: Record{Value: []byte("http:x=GET http://127.0.0.1/x;"), Timestamp: 4}},
		{Index: 4, Err: "udf: a record asked for more than 64 lookups"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got\n%+v\nwant\n%+v", got, want)
	}
	if _, err := InvokeLookup("test_lookup_join", "test_lookup_join", in, answer); err == nil {
		t.Fatal("a lookup_result function taken for a request function was accepted")
	}
}
