package spec

import (
	"strings"
	"testing"
)

func TestAsyncLookupDefaults(t *testing.T) {
	j, err := Parse([]byte(`
name: l
lookups: {http: {allow: ["127.0.0.1:8080", api.example.com]}}
sources: [{id: src, generator: {kind: sequence}}]
operators:
  - {id: look, input: src, async_lookup: {module: ` + modA + `, url: "http://api.example.com/u/{key}", function: join}}
sinks: [{id: out, input: look, discard: true}]
`))
	if err != nil {
		t.Fatal(err)
	}
	a := j.Operators[0].AsyncLookup
	if a.Capacity != 100 || a.MaxBytes != 16<<20 || a.Timeout != dur("5s") || a.Retries != 0 || a.Output != LookupOrdered {
		t.Errorf("defaults %+v", a)
	}
	if j.Operators[0].Kind() != "async_lookup" {
		t.Errorf("kind %q", j.Operators[0].Kind())
	}
}

// Each rule of async_lookup, lookups and test_stream names its field.
func TestLookupAndTestStreamSpecs(t *testing.T) {
	op := func(fields string) string {
		return "name: j\nlookups: {http: {allow: ['127.0.0.1:8080', ok.example]}}\nsources: [{id: src, generator: {kind: sequence}}]\n" +
			"operators: [{id: look, input: src, async_lookup: {module: " + modA + ", function: f, " + fields + "}}]\n" +
			"sinks: [{id: out, input: look, discard: true}]\n"
	}
	stream := func(steps string) string {
		return "name: j\nsources: [{id: src, test_stream: {steps: [" + steps + "]}}]\nsinks: [{id: out, input: src, discard: true}]\n"
	}
	tests := []struct {
		name, spec, path, msg string
	}{
		{"nothing to look up", op("capacity: 1"), "operators[0].async_lookup", "set request (a lookup_request function), bucket or url"},
		{"two targets", op("bucket: B, request: r"), "operators[0].async_lookup", "set only one of request, bucket and url"},
		{"bad bucket", op("bucket: a.b"), "operators[0].async_lookup.bucket", "want letters, digits"},
		{"host not allowed", op("url: 'http://evil.example/{key}'"), "operators[0].async_lookup.url", `host "evil.example" is not on lookups.http.allow`},
		{"port not allowed", op("url: 'http://127.0.0.1:9090/{key}'"), "operators[0].async_lookup.url", `host "127.0.0.1:9090" is not on lookups.http.allow`},
		{"not http", op("url: 'ftp://ok.example/{key}'"), "operators[0].async_lookup.url", "want an http or https URL"},
		{"capacity", op("request: r, capacity: 0"), "operators[0].async_lookup.capacity", "must be between 1 and 65536, got 0"},
		{"max bytes", op("request: r, max_bytes: 10"), "operators[0].async_lookup.max_bytes", "must be at least 65536"},
		{"timeout", op("request: r, timeout: 0s"), "operators[0].async_lookup.timeout", "must be positive"},
		{"retries", op("request: r, retries: -1"), "operators[0].async_lookup.retries", "must be between 0 and 100"},
		{"output", op("request: r, output: sorted"), "operators[0].async_lookup.output", "must be one of ordered, unordered"},
		{"allow a URL", "name: j\nlookups: {http: {allow: ['http://x/']}}\n" + minimalSpec[len("\nname: j\n"):], "lookups.http.allow[0]", "want a host or host:port, not a URL"},
		{"empty stream", stream(""), "sources[0].test_stream.steps", "required: at least one step"},
		{"empty step", stream("{}"), "sources[0].test_stream.steps[0]", "set record, watermark or advance_processing_time"},
		{"two in a step", stream("{watermark: 1, advance_processing_time: 1s}"), "sources[0].test_stream.steps[0]", "set only one of"},
		{"watermark back", stream("{watermark: 5}, {watermark: 4}"), "sources[0].test_stream.steps[1].watermark", "goes back from 5 to 4"},
		{"negative time", stream("{advance_processing_time: -1s}"), "sources[0].test_stream.steps[0].advance_processing_time", "must be positive"},
		{"time finer than a millisecond", stream("{advance_processing_time: 1500us}"), "sources[0].test_stream.steps[0].advance_processing_time", "must be whole milliseconds, got 1.5ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := problemAt(t, tt.spec, tt.path); !strings.Contains(got, tt.msg) {
				t.Errorf("%s: %q, want %q", tt.path, got, tt.msg)
			}
		})
	}
}
