package spec

import (
	"reflect"

	"go.yaml.in/yaml/v3"
)

// Lines maps the path of every field and list element a spec gives to its
// line, so that problems found after Parse (a module or a stream that does
// not exist) can name the line as Parse's own problems do.
type Lines map[string]int

// LinesOf reads the lines of a spec's fields; it is empty for a spec that
// does not parse as an object.
func LinesOf(data []byte) Lines {
	root, syntax := tree(data)
	if syntax != nil || root.Kind != yaml.MappingNode {
		return Lines{}
	}
	var j Job
	d := newDecoder()
	d.value(root, reflect.ValueOf(&j).Elem(), "")
	return Lines(d.seen)
}

// Line is the line of path or of its nearest ancestor the spec gives; 0
// when there is none.
func (l Lines) Line(path string) int {
	for p := path; p != ""; p = parent(p) {
		if n, ok := l[p]; ok {
			return n
		}
	}
	return 0
}
