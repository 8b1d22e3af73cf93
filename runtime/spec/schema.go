package spec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"

	"go.yaml.in/yaml/v3"
)

//go:generate go test -run ^TestSchemaFile$ . -update

// SchemaID is the $id of the job spec's JSON Schema.
const SchemaID = "https://wasmstream.io/schemas/job.schema.json"

// Patterns of the schema, as the validator checks the same values
// (isIdentifier, isModuleRef, time.ParseDuration).
const (
	identifierPattern = `^[A-Za-z0-9._-]+$`
	// moduleRefPattern is a module id, name or name@version.
	moduleRefPattern = `^(sha256:[0-9a-f]{64}|[a-z0-9][a-z0-9_-]{0,62}(@[1-9][0-9]{0,8})?)$`
	// durationPattern is what time.ParseDuration reads: an optionally
	// signed sequence of decimal numbers, each with a unit, or a bare 0.
	durationPattern = `^[-+]?(0|(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$`
)

// patterns maps a spec type and the json name of one of its string fields
// to the pattern its values match.
var patterns = map[reflect.Type]map[string]string{
	reflect.TypeFor[Job]():         {"name": identifierPattern},
	reflect.TypeFor[Source]():      {"id": identifierPattern},
	reflect.TypeFor[Operator]():    {"id": identifierPattern},
	reflect.TypeFor[Sink]():        {"id": identifierPattern},
	reflect.TypeFor[FunctionRef](): {"module": moduleRefPattern},
	reflect.TypeFor[KeyBy]():       {"module": moduleRefPattern},
	reflect.TypeFor[Aggregate]():   {"module": moduleRefPattern},
}

// JSONSchema is the JSON Schema (draft 2020-12) of a job spec, generated
// from the spec's types: a field's json name is its property, its `default`
// tag its default and its `required` tag puts it in required; the fields
// with fixed values (enums) have them as enum; durations are strings that
// match the pattern of Go durations. Every object rejects other properties,
// as Parse rejects unknown fields. The schema checks the shape of a spec,
// not the rules between fields (an input naming an operator, a window's
// fields for its type), which Parse checks. docs/job.schema.json is this
// schema, indented.
func JSONSchema() []byte {
	g := &schemaGen{defs: map[string]*object{}}
	root := g.structType(reflect.TypeFor[Job]())
	doc := &object{}
	doc.set("$schema", "https://json-schema.org/draft/2020-12/schema")
	doc.set("$id", SchemaID)
	doc.set("title", "Job spec")
	doc.set("description", "A job of the platform: its sources, operators and sinks (docs/JOBS.md). JSON or YAML; durations are Go duration strings.")
	doc.members = append(doc.members, root.members...)
	defs := &object{}
	for _, name := range g.order {
		defs.set(name, g.defs[name])
	}
	doc.set("$defs", defs)
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		panic(fmt.Sprintf("spec: marshal the schema: %v", err)) // strings, numbers and objects only
	}
	return append(out, '\n')
}

// schemaGen generates the schema's definitions: one per struct type but Job,
// and Duration, in the order they are first met.
type schemaGen struct {
	defs  map[string]*object
	order []string
}

// ref is a reference to the definition of t, which it makes the first time.
func (g *schemaGen) ref(t reflect.Type) *object {
	name := t.Name()
	if _, ok := g.defs[name]; !ok {
		g.defs[name] = nil // taken: a type that refers to itself refers to this
		g.order = append(g.order, name)
		if t == durationType {
			d := &object{}
			d.set("type", "string")
			d.set("pattern", durationPattern)
			d.set("description", `a Go duration string: "100ms", "5s", "1m30s", "0s", "-1ms"`)
			g.defs[name] = d
		} else {
			g.defs[name] = g.structType(t)
		}
	}
	r := &object{}
	r.set("$ref", "#/$defs/"+name)
	return r
}

func (g *schemaGen) structType(t reflect.Type) *object {
	props := &object{}
	var required []string
	for i := range t.NumField() {
		f := t.Field(i)
		name := jsonName(f)
		s := g.fieldType(f.Type)
		if values, ok := enums[t][name]; ok {
			s.set("enum", values)
		}
		if p, ok := patterns[t][name]; ok {
			s.set("pattern", p)
		}
		if f.Tag.Get("required") == "true" {
			required = append(required, name)
			if f.Type.Kind() == reflect.Slice {
				s.set("minItems", 1)
			}
		}
		if def, ok := f.Tag.Lookup("default"); ok {
			s.set("default", defaultValue(def))
		}
		props.set(name, s)
	}
	o := &object{}
	o.set("type", "object")
	o.set("properties", props)
	if len(required) > 0 {
		o.set("required", required)
	}
	o.set("additionalProperties", false)
	return o
}

func (g *schemaGen) fieldType(t reflect.Type) *object {
	if t == durationType {
		return g.ref(t)
	}
	if t == onUDFErrorType {
		name := &object{}
		name.set("type", "string")
		name.set("enum", onUDFErrors)
		s := &object{}
		s.set("oneOf", []any{name, g.ref(t)})
		return s
	}
	s := &object{}
	switch t.Kind() {
	case reflect.Pointer:
		return g.fieldType(t.Elem())
	case reflect.Struct:
		return g.ref(t)
	case reflect.Slice:
		s.set("type", "array")
		s.set("items", g.fieldType(t.Elem()))
	case reflect.String:
		s.set("type", "string")
	case reflect.Bool:
		s.set("type", "boolean")
	case reflect.Int, reflect.Int64:
		s.set("type", "integer")
	case reflect.Float64:
		s.set("type", "number")
	default:
		panic(fmt.Sprintf("spec: no schema for %s", t))
	}
	return s
}

// defaultValue is a `default` tag as a JSON value. The tags are constants
// of this package that the tests decode, so a bad one is a bug.
func defaultValue(def string) any {
	var v any
	if err := yaml.Unmarshal([]byte(def), &v); err != nil {
		panic(fmt.Sprintf("spec: bad default tag %q", def))
	}
	if m, ok := v.(map[string]any); ok && len(m) == 0 {
		return &object{} // {}: the block with its own defaults
	}
	return v
}

// object is a JSON object that keeps its members in the order they are set.
type object struct {
	members []member
}

type member struct {
	key   string
	value any
}

func (o *object) set(key string, value any) {
	o.members = append(o.members, member{key, value})
}

// MarshalJSON writes the members in order.
func (o *object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o.members {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.key)
		v, err := json.Marshal(m.value)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
