package udfs

import (
	"context"
	"reflect"
	"testing"

	"wasmstream.io/platform/abi"
)

// lookupCases are orders that cover what ask_kv and ask_http read and how
// they fail.
var lookupCases = []abi.Record{
	{Key: []byte("o1"), Value: []byte(`{"user":"u1"}`), Timestamp: 1},
	{Key: []byte("o2"), Value: []byte(`{"user":"u2","url":"http://127.0.0.1:8080/users/u2"}`), Timestamp: 2,
		Headers: []abi.Header{{Name: []byte("h"), Value: []byte("1")}}},
	{Value: []byte(`{"order":3}`), Timestamp: 3},
	{Value: []byte(`{"user":"unterminated`), Timestamp: 4},
}

// TestLookupAcrossLanguages runs the async lookup functions of udfs/lookup
// (Go) and of its Rust, C and AssemblyScript twins over the same records and results, and checks
// that their output entries are byte for byte the same, and that the Go
// module's requests decode to what it asked for.
func TestLookupAcrossLanguages(t *testing.T) {
	ctx := context.Background()
	results := [][]abi.LookupResult{
		{{Status: abi.LookupFound, Value: []byte(`{"name":"Ann"}`)}},
		{{Status: abi.LookupAbsent}},
		{},
		{{Status: abi.LookupFound, Value: []byte(`1`)}, {Status: abi.LookupFound, Value: []byte(`2`)}},
	}
	resultFrame := abi.AppendInputHeader(nil, uint32(len(lookupCases)))
	for i := range lookupCases {
		resultFrame = abi.AppendLookupInput(resultFrame, &lookupCases[i], results[i])
	}
	outputs := func(in *instance) map[string][]abi.Entry {
		out := map[string][]abi.Entry{}
		for _, fn := range []string{"ask_kv", "ask_http"} {
			entries, err := in.run(ctx, fn, lookupCases)
			if err != nil {
				t.Fatalf("%s: %v", fn, err)
			}
			out[fn] = entries
		}
		ptr, err := in.alloc.Call(ctx, uint64(len(resultFrame)))
		if err != nil {
			t.Fatal(err)
		}
		entries, err := in.callAt(ctx, uint32(in.desc.Lookup("join")), uint32(ptr[0]), resultFrame, uint32(len(lookupCases)))
		if err != nil {
			t.Fatalf("join: %v", err)
		}
		out["join"] = entries
		return out
	}
	goMod := instantiate(t, "lookup")
	want := outputs(goMod)
	var asked []string
	for _, fn := range []string{"ask_kv", "ask_http"} {
		for _, e := range want[fn] {
			if e.Tag == abi.TagError {
				asked = append(asked, fn+" error "+string(e.Message))
				continue
			}
			req, err := abi.ParseLookupRequest(e.Value)
			if err != nil {
				t.Fatalf("%s entry %d: %v", fn, e.Index, err)
			}
			asked = append(asked, fn+" "+req.Kind.String()+" "+string(req.Target)+" "+string(req.Key))
		}
	}
	wantAsked := []string{
		"ask_kv kv users u1",
		"ask_kv kv users u2",
		"ask_kv error lookup: order without user",
		"ask_kv error lookup: order without user",
		"ask_http error lookup: order without url",
		"ask_http http http://127.0.0.1:8080/users/u2 ",
		"ask_http error lookup: order without url",
		"ask_http error lookup: order without url",
	}
	if !reflect.DeepEqual(asked, wantAsked) {
		t.Fatalf("asked %q, want %q", asked, wantAsked)
	}
	var joined []string
	for _, e := range want["join"] {
		joined = append(joined, string(e.Value))
	}
	wantJoined := []string{`{"order":{"user":"u1"},"profile":{"name":"Ann"}}`, `{"order":{"user":"u2","url":"http://127.0.0.1:8080/users/u2"},"profile":null}`,
		`{"order":{"order":3},"profile":null}`, `{"order":{"user":"unterminated,"profile":null}`}
	if !reflect.DeepEqual(joined, wantJoined) {
		t.Fatalf("joined %q, want %q", joined, wantJoined)
	}
	for _, lang := range sdkLanguages {
		t.Run(lang, func(t *testing.T) {
			in := instantiate(t, "lookup-"+lang)
			if !reflect.DeepEqual(in.desc, goMod.desc) {
				t.Fatalf("description %+v, want %+v", in.desc, goMod.desc)
			}
			got := outputs(in)
			for fn, w := range want {
				if !reflect.DeepEqual(got[fn], w) {
					t.Errorf("%s: got\n%+v\nwant\n%+v", fn, got[fn], w)
				}
			}
		})
	}
}
