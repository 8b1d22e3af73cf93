package udf

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"wasmstream.io/platform/abi"
)

var (
	testList  = ListState("test_list")
	testMap   = MapState("test_map", TTL(10*time.Millisecond))
	testValue = ValueState("test_value")
)

func init() {
	Process("test_collect", func(ctx *Context, key []byte, recs []Record) error {
		for _, r := range recs {
			switch {
			case string(r.Value) == "fail":
				ctx.EmitValue([]byte("discarded"))
				return errors.New("failed on purpose")
			case string(r.Value) == "panic":
				panic("on purpose")
			case strings.HasPrefix(string(r.Value), "m:"):
				kv := strings.SplitN(string(r.Value[2:]), "=", 2)
				if kv[1] == "" {
					testMap.Remove(ctx, []byte(kv[0]))
				} else {
					testMap.Put(ctx, []byte(kv[0]), []byte(kv[1]))
				}
			case string(r.Value) == "clear":
				testList.Clear(ctx)
				testMap.Clear(ctx)
			default:
				testList.Append(ctx, r.Value)
			}
		}
		var out []byte
		for _, e := range testList.Get(ctx) {
			out = append(append(out, e...), ',')
		}
		out = append(out, '|')
		for _, e := range testMap.Entries(ctx) {
			out = append(append(append(append(out, e.Key...), '='), e.Value...), ',')
		}
		ctx.EmitValue(out)
		return nil
	})
	Process("test_emit", func(ctx *Context, key []byte, recs []Record) error {
		ctx.Emit(recs[0])
		ctx.Emit(Record{Key: []byte("other"), Value: []byte("x"), Timestamp: recs[len(recs)-1].Timestamp, Headers: recs[len(recs)-1].Headers})
		ctx.EmitValue([]byte("plain"))
		if v, ok := testValue.Get(ctx); ok {
			ctx.EmitValue(append([]byte("before="), v...))
		}
		testValue.Set(ctx, []byte(strings.Repeat("v", 300)))
		return nil
	})
	OnTimer("test_timer", func(ctx *Context, key []byte, t Timer) error {
		if string(key) == "bad" {
			return errors.New("bad timer")
		}
		ctx.EmitValue([]byte("fired"))
		return nil
	})
}

func vrec(v string, ts int64) Record { return Record{Value: []byte(v), Timestamp: ts} }

func outValues(t *testing.T) func(out []Output, err error) []string {
	return func(out []Output, err error) []string {
		t.Helper()
		return valuesOf(t, out, err)
	}
}

func valuesOf(t *testing.T, out []Output, err error) []string {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	got := []string{}
	for _, o := range out {
		if o.Err != "" {
			got = append(got, "error:"+o.Err)
			continue
		}
		got = append(got, string(o.Record.Value))
	}
	return got
}

func TestProcessStateKinds(t *testing.T) {
	h := NewHarness("")
	values := outValues(t)
	steps := []struct {
		key  string
		recs []Record
		want []string
	}{
		{"a", []Record{vrec("x", 1), vrec("y", 2)}, []string{"x,y,|"}},
		{"b", []Record{vrec("m:k=1", 3)}, []string{"|k=1,"}},
		{"a", []Record{vrec("m:j=2", 4), vrec("m:i=3", 5)}, []string{"x,y,|i=3,j=2,"}},
		{"a", []Record{vrec("m:j=", 6), vrec("z", 7)}, []string{"x,y,z,|i=3,"}},
		{"a", []Record{vrec("w", 8), vrec("fail", 9), vrec("v", 10)}, []string{"error:failed on purpose", "error:failed on purpose", "error:failed on purpose"}},
		{"a", []Record{vrec("panic", 11)}, []string{"error:panic: on purpose"}},
		{"a", []Record{vrec("clear", 12)}, []string{"|"}},
	}
	for i, s := range steps {
		if got := values(h.Process("test_collect", []byte(s.key), s.recs...)); !reflect.DeepEqual(got, s.want) {
			t.Fatalf("step %d: got %q, want %q", i, got, s.want)
		}
	}
	if _, err := h.SetProcessingTime(10); err != nil {
		t.Fatal(err)
	}
	if got := values(h.Process("test_collect", []byte("b"), vrec("q", 13))); !reflect.DeepEqual(got, []string{"q,|"}) {
		t.Fatalf("after the map's TTL: %q", got)
	}
}

func TestProcessEmit(t *testing.T) {
	h := NewHarness("")
	hd := []Header{{Name: []byte("h"), Value: []byte("1")}}
	out, err := h.Process("test_emit", []byte("k"), Record{Value: []byte("first"), Timestamp: 5}, Record{Value: []byte("last"), Timestamp: 9, Headers: hd})
	if err != nil {
		t.Fatal(err)
	}
	want := []Output{
		{Index: 1, Record: Record{Key: []byte("k"), Value: []byte("first"), Timestamp: 5}},
		{Index: 1, Record: Record{Key: []byte("other"), Value: []byte("x"), Timestamp: 9, Headers: hd}},
		{Index: 1, Record: Record{Key: []byte("k"), Value: []byte("plain"), Timestamp: 9}},
	}
	if !reflect.DeepEqual(out, want) {
		t.Fatalf("got %+v\nwant %+v", out, want)
	}
	out, err = h.Process("test_emit", []byte("k"), Record{Value: []byte("again"), Timestamp: 10})
	if err != nil || len(out) != 4 || string(out[3].Record.Value) != "before="+strings.Repeat("v", 300) {
		t.Fatalf("a value larger than the first buffer: %+v %v", out, err)
	}
	if v, ok := h.Value("test_value", []byte("k")); !ok || len(v) != 300 {
		t.Fatalf("harness value %q %v", v, ok)
	}
}

func TestOnTimerFrames(t *testing.T) {
	h := NewHarness("test_timer")
	frame := abi.AppendFrameHead(nil, abi.FrameHead{Groups: 2})
	frame = abi.AppendGroupHead(frame, &abi.GroupHead{Flags: abi.GroupTimer, Key: []byte("bad"), TimerTime: 7}, 0)
	frame = abi.AppendGroupHead(frame, &abi.GroupHead{Flags: abi.GroupTimer, Key: []byte("good"), TimerTime: 8, TimerDomain: abi.ProcessingTime}, 0)
	in := []Record{{Key: []byte("bad"), Timestamp: 7}, {Key: []byte("good"), Timestamp: 8}}
	out, err := resolve(h.call(functions.lookupKind(t, "test_timer"), frame, [][]byte{[]byte("bad"), []byte("good")}, nil), in)
	if err != nil {
		t.Fatal(err)
	}
	want := []Output{{Index: 0, Err: "bad timer"}, {Index: 1, Record: Record{Key: []byte("good"), Value: []byte("fired"), Timestamp: 8}}}
	if !reflect.DeepEqual(out, want) {
		t.Fatalf("got %+v, want %+v", out, want)
	}
	noTimer := abi.AppendGroupHead(abi.AppendFrameHead(nil, abi.FrameHead{Groups: 1}), &abi.GroupHead{Key: []byte("x")}, 0)
	if _, err := resolve(h.call(functions.lookupKind(t, "test_timer"), noTimer, [][]byte{[]byte("x")}, nil), nil); err == nil || !strings.Contains(err.Error(), "carries no timer") {
		t.Fatalf("a group without a timer: %v", err)
	}
	if _, err := resolve(h.call(functions.lookupKind(t, "test_collect"), []byte{1, 2}, nil, nil), nil); err == nil || !strings.Contains(err.Error(), "malformed frame") {
		t.Fatalf("a malformed frame: %v", err)
	}
}

func (g *registry) lookupKind(t *testing.T, name string) uint32 {
	t.Helper()
	i := g.lookup(name)
	if i < 0 {
		t.Fatalf("no function %q", name)
	}
	return uint32(i)
}

func TestStateOutsideACall(t *testing.T) {
	defer func() {
		if p := recover(); p == nil || !strings.Contains(p.(string), "outside the call of a keyed function") {
			t.Fatalf("recovered %v", p)
		}
	}()
	testValue.Get(&Context{})
}

func TestDescribeStates(t *testing.T) {
	var g registry
	g.add(function{name: "p", kind: abi.KindProcess, run: func(*caller, []byte) []byte { return nil }})
	g.declare("seen", abi.StateValue, []StateOption{TTL(90 * time.Minute)})
	g.declare("items", abi.StateList, nil)
	g.declare("by\"id", abi.StateMap, nil)
	want := `{"abi":1,"functions":[{"name":"p","kind":"process"}],"states":[{"name":"seen","kind":"value","ttl":"1h30m0s"},{"name":"items","kind":"list"},{"name":"by\"id","kind":"map"}]}`
	if got := string(g.describe()); got != want {
		t.Fatalf("got %s\nwant %s", got, want)
	}
	d, err := abi.ParseDescription(g.describe())
	if err != nil {
		t.Fatal(err)
	}
	if d.LookupState("items") != 1 || d.States[0].TTL != "1h30m0s" {
		t.Fatalf("parsed %+v", d.States)
	}
	defer func() {
		if p := recover(); p == nil || !strings.Contains(p.(string), `state "seen" declared twice`) {
			t.Fatalf("recovered %v", p)
		}
	}()
	g.declare("seen", abi.StateList, nil)
}
