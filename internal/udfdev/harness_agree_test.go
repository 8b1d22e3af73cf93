package udfdev

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wasmstream.io/platform/internal/wasmbuild"
)

// timeoutInput is udfs/testdata/harness/timeout.script as Run's input: the
// same records and time moves.
const timeoutInput = `{"key":"a","value":"a1","timestamp":1000}
{"key":"a","value":"a2","timestamp":2000}
{"key":"b","value":"b1","timestamp":1500}
{"watermark":61999}
{"watermark":62000}
{"key":"b","value":"b2","timestamp":30000}
{"processing_time":1800000}
{"key":"c","value":"c1","timestamp":100000}
{"watermark":90000}
{"processing_time":5400000}
{"watermark":160000}
{"key":"d","value":"d1","timestamp":200000}
{"processing_time":5400001}
{"watermark":260000}
`

// TestTimeoutAgreesWithNativeHarnesses runs the timeout modules of the
// Rust, C and AssemblyScript SDKs through the platform's operator with the
// timeout script's records and time moves, and checks that they emit what
// the SDKs' native harnesses emit for the script (the out lines of
// udfs/testdata/harness/timeout.want): the harnesses' TTL and timer rules
// are the platform's.
func TestTimeoutAgreesWithNativeHarnesses(t *testing.T) {
	transcript, err := os.ReadFile(filepath.Join(wasmbuild.Root(), "udfs", "testdata", "harness", "timeout.want"))
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, line := range strings.Split(string(transcript), "\n") {
		var index int
		var key, value string
		var ts int64
		if n, _ := fmt.Sscanf(line, "out %d %s %d %s", &index, &key, &ts, &value); n == 4 {
			want = append(want, fmt.Sprintf("%s %d %s", key, ts, value))
		}
	}
	if len(want) != 4 {
		t.Fatalf("timeout.want has %d outputs, want 4: %q", len(want), want)
	}
	in, steps, err := ReadInput(strings.NewReader(timeoutInput))
	if err != nil {
		t.Fatal(err)
	}
	for _, module := range []string{"timeout-rust", "timeout-c", "timeout-as"} {
		var out bytes.Buffer
		if err := Run(context.Background(), wasmbuild.UDF(t, module), in, &out, Options{Function: "count", OnTimer: "timeout", Steps: steps}); err != nil {
			t.Fatalf("%s: %v", module, err)
		}
		var got []string
		for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			var o struct {
				Key, Value string
				Timestamp  int64
			}
			if err := json.Unmarshal([]byte(line), &o); err != nil {
				t.Fatalf("%s: output line %q: %v", module, line, err)
			}
			got = append(got, fmt.Sprintf("%s %d %s", o.Key, o.Timestamp, o.Value))
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: got\n%s\nwant\n%s", module, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}
