package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// tree reads a spec into a node tree: JSON when its first non-space byte is
// '{', YAML otherwise. JSON is read with encoding/json, so it gets JSON's
// syntax (YAML parsers reject some valid JSON escapes) and trailing data is
// an error.
func tree(data []byte) (*yaml.Node, *FieldError) {
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) > 0 && t[0] == '{' {
		return jsonTree(data)
	}
	return yamlTree(data)
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

func yamlTree(data []byte) (*yaml.Node, *FieldError) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &FieldError{Message: "the job spec is empty"}
		}
		return nil, yamlError(err)
	}
	var more yaml.Node
	if err := dec.Decode(&more); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, yamlError(err)
		}
		return nil, &FieldError{Message: "a job spec is a single YAML document", Line: more.Line}
	}
	return doc.Content[0], nil
}

func yamlError(err error) *FieldError {
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &FieldError{Message: "invalid YAML: " + m[2], Line: line}
	}
	return &FieldError{Message: "invalid YAML: " + err.Error()}
}

// maxJSONDepth bounds nesting far beyond the spec's own depth.
const maxJSONDepth = 32

type jsonReader struct {
	dec      *json.Decoder
	newlines []int // offsets of '\n'
}

func jsonTree(data []byte) (*yaml.Node, *FieldError) {
	r := &jsonReader{dec: json.NewDecoder(bytes.NewReader(data))}
	r.dec.UseNumber()
	for i, b := range data {
		if b == '\n' {
			r.newlines = append(r.newlines, i)
		}
	}
	n, err := r.value(0)
	if err == nil {
		if _, e := r.dec.Token(); !errors.Is(e, io.EOF) {
			err = errors.New("data after the job object")
		}
	}
	if err != nil {
		fe := &FieldError{Message: "invalid JSON: " + err.Error(), Line: r.line(r.dec.InputOffset())}
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			fe.Line = r.line(syn.Offset)
		}
		return nil, fe
	}
	return n, nil
}

// line is the line of the byte before offset: the last one read.
func (r *jsonReader) line(offset int64) int {
	return sort.SearchInts(r.newlines, int(offset)-1) + 1
}

func (r *jsonReader) value(depth int) (*yaml.Node, error) {
	if depth > maxJSONDepth {
		return nil, errors.New("nested too deeply")
	}
	tok, err := r.dec.Token()
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	n := &yaml.Node{Kind: yaml.ScalarNode, Line: r.line(r.dec.InputOffset())}
	switch t := tok.(type) {
	case json.Delim:
		if t == '{' {
			n.Kind, n.Tag = yaml.MappingNode, "!!map"
		} else {
			n.Kind, n.Tag = yaml.SequenceNode, "!!seq"
		}
		return n, r.content(n, depth)
	case string:
		n.Tag, n.Value = "!!str", t
	case json.Number:
		n.Tag, n.Value = "!!int", t.String()
		if strings.ContainsAny(n.Value, ".eE") {
			n.Tag = "!!float"
		}
	case bool:
		n.Tag, n.Value = "!!bool", strconv.FormatBool(t)
	case nil:
		n.Tag, n.Value = "!!null", "null"
	}
	return n, nil
}

// content reads the members of an object or the elements of an array,
// and its closing delimiter.
func (r *jsonReader) content(n *yaml.Node, depth int) error {
	for r.dec.More() {
		if n.Kind == yaml.MappingNode {
			key, err := r.value(depth + 1) // the decoder only allows a string here
			if err != nil {
				return err
			}
			n.Content = append(n.Content, key)
		}
		v, err := r.value(depth + 1)
		if err != nil {
			return err
		}
		n.Content = append(n.Content, v)
	}
	_, err := r.dec.Token()
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return err
}
