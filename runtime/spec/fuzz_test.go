package spec

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

// FuzzParse checks that Parse never panics, that it fails only with *Error,
// and that an accepted spec re-marshalled with encoding/json parses to an
// equal Job.
func FuzzParse(f *testing.F) {
	for _, tc := range validSpecs {
		f.Add([]byte(tc.spec))
	}
	f.Add([]byte(designSpec))
	f.Add([]byte(designJSON))
	for _, tc := range invalidSpecs {
		f.Add([]byte(tc.spec))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		j, err := Parse(data)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || len(e.Problems) == 0 || j != nil {
				t.Fatalf("Parse = %v, %v; want nil and an *Error with problems", j, err)
			}
			return
		}
		b, err := json.Marshal(j)
		if err != nil {
			t.Fatalf("Marshal: %v", err)
		}
		again, err := Parse(b)
		if err != nil {
			t.Fatalf("re-marshalled spec rejected: %v\n%s", err, b)
		}
		if !reflect.DeepEqual(j, again) {
			t.Fatalf("re-marshalled spec differs:\n%s\nwant\n%s", show(again), show(j))
		}
	})
}
