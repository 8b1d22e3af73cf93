package exec

import (
	"encoding/json"
	"maps"
	"testing"
)

// FuzzDecodePositions: a source subtask's positions blob, as a checkpoint
// holds it, decodes without panicking, and what decodes encodes to the
// same positions.
func FuzzDecodePositions(f *testing.F) {
	f.Add([]byte(`{">":42}`))
	f.Add([]byte(`{"clicks.a":7,"clicks.b":0}`))
	f.Add([]byte(`{"0":18446744073709551615}`))
	f.Add([]byte(`{">":4`))
	f.Add([]byte(`null`))
	f.Add([]byte(`{">":-1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		pos, err := decodePositions(data)
		if err != nil {
			if decodeBlob("positions~src~0", data) == nil {
				t.Fatal("decodeBlob accepts what decodePositions refuses")
			}
			return
		}
		again, err := json.Marshal(pos)
		if err != nil {
			t.Fatal(err)
		}
		back, err := decodePositions(again)
		if err != nil || !maps.Equal(back, pos) {
			t.Fatalf("re-encoded positions %s: %v, %v", again, back, err)
		}
	})
}

func TestDecodeBlobKinds(t *testing.T) {
	for _, c := range []struct {
		name, data, want string
	}{
		{"positions~in~0", `{">":3}`, ""},
		{"positions~in~0", `{">":3`, "positions: unexpected end of JSON input"},
		{"positions~in~0", `null`, "positions: null, want an object"},
		{"watermarks~in~0", `x`, "not a watermark generator snapshot"},
		{"sink~out~0", `x`, "connector: staged epochs: not an epoch snapshot"},
		// Operator state is checked by its checksum only.
		{"window~w~0", `x`, ""},
	} {
		err := decodeBlob(c.name, []byte(c.data))
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("%s %q: %q, want %q", c.name, c.data, got, c.want)
		}
	}
}
