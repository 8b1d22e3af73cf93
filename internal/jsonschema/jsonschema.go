// Package jsonschema checks JSON values against the part of JSON Schema
// (draft 2020-12) that the platform's own schemas use: $ref to local
// definitions, type, properties, required, additionalProperties false, enum,
// pattern, items, minItems and oneOf, with the annotations $schema, $id, $defs,
// title, description and default. It exists to test those schemas: a
// keyword outside that set is reported as an error, so that a schema never
// passes because the checker ignored part of it.
package jsonschema

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Validate checks instance (as encoding/json or YAML decodes it into any:
// maps, slices, strings, numbers, booleans and nil) against schema (JSON)
// and returns every violation as "<JSON pointer>: <what>", sorted.
func Validate(schema []byte, instance any) ([]string, error) {
	var root any
	if err := json.Unmarshal(schema, &root); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	c := &checker{root: root, patterns: map[string]*regexp.Regexp{}}
	c.check(root, normalise(instance), "")
	if c.err != nil {
		return nil, c.err
	}
	sort.Strings(c.errs)
	return c.errs, nil
}

type checker struct {
	root     any
	patterns map[string]*regexp.Regexp
	errs     []string
	// err is a problem of the schema itself.
	err error
}

func (c *checker) fail(at, format string, args ...any) {
	if at == "" {
		at = "/"
	}
	c.errs = append(c.errs, at+": "+fmt.Sprintf(format, args...))
}

func (c *checker) schemaErr(format string, args ...any) {
	if c.err == nil {
		c.err = fmt.Errorf("schema: "+format, args...)
	}
}

var annotations = []string{"$schema", "$id", "$defs", "title", "description", "default"}

func (c *checker) check(schema, v any, at string) {
	s, ok := schema.(map[string]any)
	if !ok {
		c.schemaErr("at %q: a schema is an object, got %T", at, schema)
		return
	}
	for k := range s {
		switch {
		case slices.Contains(annotations, k):
		case slices.Contains([]string{"$ref", "type", "properties", "required", "additionalProperties", "enum", "pattern", "items", "minItems", "oneOf"}, k):
		default:
			c.schemaErr("keyword %q is not supported", k)
		}
	}
	if ref, ok := s["$ref"].(string); ok {
		target := c.resolve(ref)
		if target == nil {
			c.schemaErr("unresolved $ref %q", ref)
			return
		}
		c.check(target, v, at)
	}
	if alts, ok := s["oneOf"].([]any); ok {
		c.oneOf(alts, v, at)
	}
	if t, ok := s["type"].(string); ok && !hasType(v, t) {
		c.fail(at, "want %s, got %s", t, typeOf(v))
		return
	}
	if e, ok := s["enum"].([]any); ok && !slices.ContainsFunc(e, func(x any) bool { return equal(x, v) }) {
		c.fail(at, "%s is not one of %s", show(v), show(e))
	}
	if p, ok := s["pattern"].(string); ok {
		if str, isStr := v.(string); isStr {
			re, err := c.pattern(p)
			if err != nil {
				c.schemaErr("pattern %q: %v", p, err)
				return
			}
			if !re.MatchString(str) {
				c.fail(at, "%s does not match %s", show(v), p)
			}
		}
	}
	switch v := v.(type) {
	case map[string]any:
		c.object(s, v, at)
	case []any:
		if n, ok := s["minItems"].(float64); ok && float64(len(v)) < n {
			c.fail(at, "want at least %v items, got %d", n, len(v))
		}
		if items, ok := s["items"]; ok {
			for i, e := range v {
				c.check(items, e, at+"/"+strconv.Itoa(i))
			}
		}
	}
}

// oneOf checks that exactly one of alts accepts v.
func (c *checker) oneOf(alts []any, v any, at string) {
	var passed int
	var firstErrs []string
	for _, alt := range alts {
		sub := &checker{root: c.root, patterns: c.patterns}
		sub.check(alt, v, at)
		if sub.err != nil && c.err == nil {
			c.err = sub.err
		}
		if len(sub.errs) == 0 {
			passed++
		} else if firstErrs == nil {
			firstErrs = sub.errs
		}
	}
	switch {
	case passed == 0:
		c.fail(at, "matches none of oneOf: %s", strings.Join(firstErrs, "; "))
	case passed > 1:
		c.fail(at, "matches %d of oneOf, want exactly one", passed)
	}
}

func (c *checker) object(s map[string]any, v map[string]any, at string) {
	props, _ := s["properties"].(map[string]any)
	if req, ok := s["required"].([]any); ok {
		for _, r := range req {
			if _, present := v[r.(string)]; !present {
				c.fail(at, "%s is required", show(r))
			}
		}
	}
	keys := make([]string, 0, len(v))
	for k := range v {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p := at + "/" + pointerEscape(k)
		if ps, ok := props[k]; ok {
			c.check(ps, v[k], p)
			continue
		}
		switch ap := s["additionalProperties"].(type) {
		case nil:
		case bool:
			if !ap {
				c.fail(p, "not allowed")
			}
		default:
			c.check(ap, v[k], p)
		}
	}
}

// resolve finds a local reference "#/a/b".
func (c *checker) resolve(ref string) any {
	path, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil
	}
	cur := c.root
	for _, tok := range strings.Split(path, "/")[1:] {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[tok]
	}
	return cur
}

func (c *checker) pattern(p string) (*regexp.Regexp, error) {
	if re, ok := c.patterns[p]; ok {
		return re, nil
	}
	re, err := regexp.Compile(p)
	if err != nil {
		return nil, err
	}
	c.patterns[p] = re
	return re, nil
}

func hasType(v any, t string) bool {
	switch t {
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "null":
		return v == nil
	case "number":
		_, ok := v.(float64)
		return ok
	case "integer":
		f, ok := v.(float64)
		return ok && f == math.Trunc(f) && !math.IsInf(f, 0)
	}
	return false
}

func typeOf(v any) string {
	switch v := v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "boolean"
	case nil:
		return "null"
	case float64:
		if v == math.Trunc(v) {
			return "integer"
		}
		return "number"
	}
	return fmt.Sprintf("%T", v)
}

// normalise turns what YAML decodes (ints, map[string]any with any values)
// into what encoding/json decodes, so that one checker serves both.
func normalise(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = normalise(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = normalise(e)
		}
		return out
	case int:
		return float64(v)
	case int64:
		return float64(v)
	case uint64:
		return float64(v)
	case json.Number:
		f, _ := v.Float64()
		return f
	}
	return v
}

func equal(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return strings.ReplaceAll(string(b), ",", ", ")
}

func pointerEscape(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}
