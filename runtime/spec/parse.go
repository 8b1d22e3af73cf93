package spec

import (
	"fmt"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Parse decodes a job spec in JSON or YAML (JSON when the first non-space
// byte is '{'), rejects unknown fields and bad values, applies defaults, and
// validates the whole job. On failure it returns *Error listing every
// problem found.
func Parse(data []byte) (*Job, error) {
	root, syntax := tree(data)
	if syntax != nil {
		return nil, &Error{Problems: []FieldError{*syntax}}
	}
	switch {
	case isNull(root):
		return nil, &Error{Problems: []FieldError{{Message: "the job spec is empty"}}}
	case root.Kind != yaml.MappingNode:
		return nil, &Error{Problems: []FieldError{{Message: "want an object, got " + describe(root), Line: root.Line}}}
	}
	var j Job
	d := newDecoder()
	d.value(root, reflect.ValueOf(&j).Elem(), "")
	if d.tooLarge() {
		return nil, &Error{Problems: []FieldError{{Message: fmt.Sprintf("the spec holds more than %d values (YAML aliases expanded)", maxValues)}}}
	}
	inheritParallelism(&j, d.seen)
	problems := d.problems
	failed := failedPaths(d.problems)
	for _, p := range validate(&j, d.seen) {
		if !failed.covers(p.Path) {
			problems = append(problems, p)
		}
	}
	if len(problems) > 0 {
		return nil, &Error{Problems: problems}
	}
	return &j, nil
}

// inheritParallelism gives the job's parallelism to every vertex that does
// not set its own, except that a source gets no more subtasks than it has
// splits: the rest would never read (docs/JOBS.md, "Source parallelism").
func inheritParallelism(j *Job, seen map[string]int) {
	set := func(list string, i int, p *int) {
		if _, ok := seen[fmt.Sprintf("%s[%d].parallelism", list, i)]; !ok {
			*p = j.Parallelism
		}
	}
	for i := range j.Sources {
		s := &j.Sources[i]
		set("sources", i, &s.Parallelism)
		if _, ok := seen[fmt.Sprintf("sources[%d].parallelism", i)]; !ok {
			if n := s.Splits(); n > 0 && n < s.Parallelism {
				s.Parallelism = n
			}
		}
	}
	for i := range j.Operators {
		set("operators", i, &j.Operators[i].Parallelism)
	}
	for i := range j.Sinks {
		set("sinks", i, &j.Sinks[i].Parallelism)
	}
}

// failed holds the paths of decoding problems and their ancestors. A
// validation problem at, under or above a value that failed to decode would
// only restate that problem, or mislead, so Parse drops it.
type failed struct{ at, above map[string]bool }

func failedPaths(decoding []FieldError) failed {
	f := failed{at: map[string]bool{}, above: map[string]bool{}}
	for _, q := range decoding {
		f.at[q.Path] = true
		for p := parent(q.Path); p != ""; p = parent(p) {
			f.above[p] = true
		}
	}
	return f
}

func (f failed) covers(path string) bool {
	if f.above[path] {
		return true
	}
	for p := path; p != ""; p = parent(p) {
		if f.at[p] {
			return true
		}
	}
	return false
}

// parent is the path of the object or list that holds path; "" at the top.
func parent(path string) string {
	return path[:max(strings.LastIndexAny(path, ".["), 0)]
}
