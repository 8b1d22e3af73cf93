package abi

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestLookupRequestRoundTrip(t *testing.T) {
	for _, r := range []LookupRequest{
		{Kind: LookupKV, Target: []byte("users"), Key: []byte("u1")},
		{Kind: LookupHTTP, Target: []byte("http://127.0.0.1:8080/users/u1"), Key: []byte{}},
	} {
		got, err := ParseLookupRequest(AppendLookupRequest(nil, &r))
		if err != nil {
			t.Fatalf("%s: %v", r.Kind, err)
		}
		if !reflect.DeepEqual(got, r) {
			t.Errorf("got %+v, want %+v", got, r)
		}
	}
}

func TestParseLookupRequestRefuses(t *testing.T) {
	for _, c := range []struct {
		name string
		req  []byte
		want string
	}{
		{"empty", nil, "want 1 byte"},
		{"unknown kind", AppendLookupRequest(nil, &LookupRequest{Kind: 9, Target: []byte("b"), Key: []byte("k")}), "unknown kind 9"},
		{"no bucket", AppendLookupRequest(nil, &LookupRequest{Kind: LookupKV, Key: []byte("k")}), "empty bucket"},
		{"no key", AppendLookupRequest(nil, &LookupRequest{Kind: LookupKV, Target: []byte("b")}), `bucket "b" without a key`},
		{"no url", AppendLookupRequest(nil, &LookupRequest{Kind: LookupHTTP}), "empty url"},
		{"http key", AppendLookupRequest(nil, &LookupRequest{Kind: LookupHTTP, Target: []byte("u"), Key: []byte("k")}), "has no key"},
		{"trailing", append(AppendLookupRequest(nil, &LookupRequest{Kind: LookupHTTP, Target: []byte("u")}), 0), "1 bytes after"},
		{"short", AppendLookupRequest(nil, &LookupRequest{Kind: LookupHTTP, Target: []byte("url")})[:5], "exceeds"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseLookupRequest(c.req)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}

func TestLookupReader(t *testing.T) {
	recs := sampleRecords()
	results := [][]LookupResult{
		{{Status: LookupFound, Value: []byte("a")}, {Status: LookupAbsent, Value: []byte{}}},
		{},
		{{Status: LookupFound, Value: []byte("")}},
	}
	frame := AppendInputHeader(nil, uint32(len(recs)))
	for i := range recs {
		frame = AppendLookupInput(frame, &recs[i], results[i%len(results)])
	}
	var lr LookupReader
	if err := lr.Reset(frame); err != nil {
		t.Fatal(err)
	}
	var rec Record
	for i := 0; ; i++ {
		res, ok := lr.Next(&rec)
		if !ok {
			if i != len(recs) {
				t.Fatalf("read %d of %d inputs: %v", i, len(recs), lr.Err())
			}
			break
		}
		if !bytes.Equal(rec.Key, recs[i].Key) || !bytes.Equal(rec.Value, recs[i].Value) || rec.Timestamp != recs[i].Timestamp || len(rec.Headers) != len(recs[i].Headers) {
			t.Fatalf("input %d: got %+v, want %+v", i, rec, recs[i])
		}
		want := results[i%len(results)]
		if len(res) != len(want) {
			t.Fatalf("input %d: %d results, want %d", i, len(res), len(want))
		}
		for j := range want {
			if res[j].Status != want[j].Status || !bytes.Equal(res[j].Value, want[j].Value) {
				t.Fatalf("input %d result %d: got %+v, want %+v", i, j, res[j], want[j])
			}
		}
	}
	if err := lr.Err(); err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]byte{frame[:len(frame)-1], append(append([]byte(nil), frame...), 0)} {
		if lr.Reset(bad) != nil {
			continue
		}
		for {
			if _, ok := lr.Next(&rec); !ok {
				break
			}
		}
		if err := lr.Err(); !errors.Is(err, ErrMalformedFrame) {
			t.Errorf("%d bytes: error %v, want a malformed frame", len(bad), err)
		}
	}
}

func FuzzLookupRequest(f *testing.F) {
	f.Add(AppendLookupRequest(nil, &LookupRequest{Kind: LookupKV, Target: []byte("b"), Key: []byte("k")}))
	f.Add(AppendLookupRequest(nil, &LookupRequest{Kind: LookupHTTP, Target: []byte("http://h/")}))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ParseLookupRequest(data)
		if err != nil {
			return
		}
		if re := AppendLookupRequest(nil, &r); !bytes.Equal(re, data) {
			t.Fatalf("re-encoded %x, want %x", re, data)
		}
	})
}

func FuzzLookupReader(f *testing.F) {
	r := Record{Key: []byte("k"), Value: []byte("v"), Timestamp: 1, Headers: []Header{{Name: []byte("n"), Value: []byte("v")}}}
	frame := AppendLookupInput(AppendInputHeader(nil, 1), &r, []LookupResult{{Status: LookupFound, Value: []byte("x")}, {Status: LookupAbsent}})
	f.Add(frame)
	f.Add([]byte{})
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 255, 255})
	f.Fuzz(func(t *testing.T, data []byte) {
		var lr LookupReader
		if lr.Reset(data) != nil {
			return
		}
		var rec Record
		again := AppendInputHeader(nil, lr.Count())
		for {
			res, ok := lr.Next(&rec)
			if !ok {
				break
			}
			again = AppendLookupInput(again, &rec, res)
		}
		if lr.Err() != nil {
			return
		}
		// A frame that decodes cleanly re-encodes to the same bytes.
		if !bytes.Equal(again, data) {
			t.Fatalf("re-encoded %x, want %x", again, data)
		}
	})
}
