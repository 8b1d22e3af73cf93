package udfdev

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"unicode/utf8"

	"wasmstream.io/platform/abi"
)

// inputLine is one record of an input file, a JSON object per line. A
// string value is its UTF-8 bytes; any other JSON value is its compact JSON
// text. Binary keys and values go in the _base64 fields.
type inputLine struct {
	Key         string          `json:"key"`
	KeyBase64   []byte          `json:"key_base64"`
	Value       json.RawMessage `json:"value"`
	ValueBase64 []byte          `json:"value_base64"`
	Timestamp   int64           `json:"timestamp"`
	Headers     []jsonHeader    `json:"headers"`
}

type jsonHeader struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// ReadRecords reads records as JSON Lines: one object per line with the
// optional fields key (or key_base64), value (or value_base64), timestamp
// (milliseconds since the epoch) and headers ([{"name", "value"}]). Blank
// lines are skipped.
func ReadRecords(r io.Reader) ([]abi.Record, error) {
	var recs []abi.Record
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 64<<20)
	for line := 1; sc.Scan(); line++ {
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		rec, err := parseRecord(text)
		if err != nil {
			return nil, fmt.Errorf("input line %d: %w", line, err)
		}
		recs = append(recs, rec)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read input: %w", err)
	}
	return recs, nil
}

func parseRecord(text []byte) (abi.Record, error) {
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.DisallowUnknownFields()
	var in inputLine
	if err := dec.Decode(&in); err != nil {
		return abi.Record{}, err
	}
	rec := abi.Record{Key: []byte(in.Key), Timestamp: in.Timestamp}
	if in.KeyBase64 != nil {
		if in.Key != "" {
			return abi.Record{}, fmt.Errorf("both key and key_base64")
		}
		rec.Key = in.KeyBase64
	}
	switch {
	case in.ValueBase64 != nil && in.Value != nil:
		return abi.Record{}, fmt.Errorf("both value and value_base64")
	case in.ValueBase64 != nil:
		rec.Value = in.ValueBase64
	case len(in.Value) > 0 && in.Value[0] == '"':
		var s string
		if err := json.Unmarshal(in.Value, &s); err != nil {
			return abi.Record{}, err
		}
		rec.Value = []byte(s)
	case in.Value != nil:
		var compact bytes.Buffer
		if err := json.Compact(&compact, in.Value); err != nil {
			return abi.Record{}, err
		}
		rec.Value = compact.Bytes()
	}
	for _, h := range in.Headers {
		rec.Headers = append(rec.Headers, abi.Header{Name: []byte(h.Name), Value: []byte(h.Value)})
	}
	return rec, nil
}

// outputLine is one output of a function, a JSON object per line: the input
// (the broadcast input, the timer, the window) it answers, or the side
// output it goes to, and either the record the host passes on or the error.
type outputLine struct {
	Input       *int         `json:"input,omitempty"`
	Broadcast   *int         `json:"broadcast_input,omitempty"`
	Timer       *firedLine   `json:"timer,omitempty"`
	Window      *windowLine  `json:"window,omitempty"`
	SideOutput  *string      `json:"side_output,omitempty"`
	Error       *string      `json:"error,omitempty"`
	Key         *string      `json:"key,omitempty"`
	KeyBase64   []byte       `json:"key_base64,omitempty"`
	Value       *string      `json:"value,omitempty"`
	ValueBase64 []byte       `json:"value_base64,omitempty"`
	Timestamp   *int64       `json:"timestamp,omitempty"`
	Headers     []jsonHeader `json:"headers,omitempty"`
	Gap         *int64       `json:"gap,omitempty"`
	Watermark   *int64       `json:"watermark,omitempty"`
	Records     *int         `json:"records,omitempty"`
}

// firedLine is the event-time timer an on_timer output answers.
type firedLine struct {
	Key       *string `json:"key,omitempty"`
	KeyBase64 []byte  `json:"key_base64,omitempty"`
	Timestamp int64   `json:"timestamp"`
}

// recordLine renders the record the host passes on for input index.
func recordLine(index int, r *abi.Record) outputLine {
	line := outputLine{Input: &index, Timestamp: &r.Timestamp}
	line.Key, line.KeyBase64 = text(r.Key)
	line.Value, line.ValueBase64 = text(r.Value)
	for _, h := range r.Headers {
		line.Headers = append(line.Headers, jsonHeader{Name: string(h.Name), Value: string(h.Value)})
	}
	return line
}

// text is b as a string when it is valid UTF-8, else as base64.
func text(b []byte) (*string, []byte) {
	if utf8.Valid(b) {
		s := string(b)
		return &s, nil
	}
	return nil, b
}

// lineWriter writes outputLines as JSON Lines.
type lineWriter struct {
	enc *json.Encoder
}

func newLineWriter(w io.Writer) *lineWriter {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return &lineWriter{enc: enc}
}

func (w *lineWriter) write(line outputLine) error { return w.enc.Encode(line) }
