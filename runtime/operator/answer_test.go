package operator

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/host"
)

func TestAnswerVerdicts(t *testing.T) {
	tests := []struct {
		name    string
		entries string // index:tag, tag r (record) or e (error)
		want    string // first/verdict per entry, or the error
	}{
		{"one each", "0:r 1:r 2:r", "first-emit first-emit first-emit"},
		{"several per input", "0:r 0:r 1:r", "first-emit emit first-emit"},
		{"error discards later entries", "0:r 0:e 0:r 1:r", "first-emit fail skip first-emit"},
		{"second error is skipped", "0:e 0:e", "first-fail skip"},
		{"gaps are fine", "0:r 3:r", "first-emit first-emit"},
		{"out of order", "1:r 0:r", "first-emit error: entry for record 0 after record 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var a Answer
			a.Reset("record")
			var got []string
			for _, f := range strings.Fields(tt.entries) {
				var i uint32
				var tag string
				fmt.Sscanf(strings.Replace(f, ":", " ", 1), "%d %s", &i, &tag)
				e := abi.Entry{Index: i, Tag: abi.TagRecord}
				if tag == "e" {
					e.Tag = abi.TagError
				}
				first, v, err := a.Next(&e)
				if err != nil {
					got = append(got, "error: "+err.Error())
					break
				}
				s := [...]string{"emit", "fail", "skip"}[v]
				if first {
					s = "first-" + s
				}
				got = append(got, s)
			}
			if g := strings.Join(got, " "); g != tt.want {
				t.Fatalf("got %q, want %q", g, tt.want)
			}
		})
	}
}

func TestIsolate(t *testing.T) {
	trap := &host.CallError{Module: "m", Function: "f", Kind: host.KindTrap, Err: errors.New("unreachable")}
	other := errors.New("sink down")
	tests := []struct {
		name   string
		mode   string
		n      int
		poison map[int]error // inputs whose presence fails a call
		want   string        // calls made, then failed inputs, then the error
	}{
		{"no failure", OnErrorSkip, 3, nil, "calls [0,3) failed [] err <nil>"},
		{"one poison among three", OnErrorSkip, 3, map[int]error{1: trap},
			"calls [0,3) [0,1) [1,2) [2,3) failed [1] err <nil>"},
		{"single input fails", OnErrorFail, 1, map[int]error{0: trap}, "calls [0,1) failed [0] err <nil>"},
		{"fail mode stops the job", OnErrorFail, 3, map[int]error{2: trap},
			"calls [0,3) failed [] err operator[v]: udf[m] function[f]: trap: unreachable"},
		{"other errors are not isolated", OnErrorSkip, 3, map[int]error{0: other}, "calls [0,3) failed [] err sink down"},
		{"other error while isolating", OnErrorSkip, 2, map[int]error{0: trap, 1: other},
			"calls [0,2) [0,1) [1,2) failed [0] err sink down"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &ErrorPolicy{Mode: tt.mode, Vertex: "v", Counts: &ErrorCounts{}}
			var calls []string
			var failed []int
			err := p.Isolate(0, tt.n,
				func(lo, hi int) error {
					calls = append(calls, fmt.Sprintf("[%d,%d)", lo, hi))
					for i := lo; i < hi; i++ {
						if e := tt.poison[i]; e != nil {
							return e
						}
					}
					return nil
				},
				func(i int, err error) error {
					failed = append(failed, i)
					return nil
				})
			got := fmt.Sprintf("calls %s failed %v err %v", strings.Join(calls, " "), failed, err)
			if got != tt.want {
				t.Fatalf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}
