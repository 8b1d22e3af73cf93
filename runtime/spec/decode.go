package spec

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// decoder fills Go values from a YAML node tree. It walks the node tree
// against the Go types, naming fields by their `json` tags, so that unknown
// fields, duplicate keys and wrong types are found with their paths and lines.
type decoder struct {
	problems []FieldError
	// seen maps the path of every field and list element the spec gives
	// (other than null) to its line.
	seen map[string]int
	// values counts the values decoded, aliases expanded.
	values int
}

// maxValues bounds the values of one spec, so that a few YAML aliases
// cannot make a small spec slow to decode.
const maxValues = 100_000

// tooLarge reports whether the spec exceeded maxValues.
func (d *decoder) tooLarge() bool { return d.values > maxValues }

func newDecoder() *decoder { return &decoder{seen: map[string]int{}} }

func (d *decoder) fail(path string, n *yaml.Node, format string, args ...any) {
	d.problems = append(d.problems, FieldError{Path: path, Message: fmt.Sprintf(format, args...), Line: n.Line})
}

func (d *decoder) wrongType(path string, n *yaml.Node, want string) {
	d.fail(path, n, "want %s, got %s", want, describe(n))
}

var (
	durationType   = reflect.TypeFor[Duration]()
	onUDFErrorType = reflect.TypeFor[OnUDFError]()
)

// value decodes n into v, which must be settable.
func (d *decoder) value(n *yaml.Node, v reflect.Value, path string) {
	if d.values++; d.tooLarge() {
		return
	}
	for n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if v.Type() == durationType {
		d.duration(n, v, path)
		return
	}
	if v.Type() == onUDFErrorType && n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str" {
		v.Set(reflect.ValueOf(OnUDFError{Policy: n.Value})) // the policy's name alone
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		d.value(n, v.Elem(), path)
	case reflect.Struct:
		d.object(n, v, path)
	case reflect.Slice:
		d.list(n, v, path)
	case reflect.String:
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
			d.wrongType(path, n, "a string")
			return
		}
		v.SetString(n.Value)
	case reflect.Bool:
		var b bool
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" || n.Decode(&b) != nil {
			d.wrongType(path, n, "a boolean")
			return
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int64:
		d.integer(n, v, path)
	case reflect.Float64:
		d.number(n, v, path)
	default:
		panic(fmt.Sprintf("spec: no decoding into %s", v.Type()))
	}
}

// number decodes a finite number, integer or not.
func (d *decoder) number(n *yaml.Node, v reflect.Value, path string) {
	var f float64
	if n.Kind != yaml.ScalarNode || (n.ShortTag() != "!!int" && n.ShortTag() != "!!float") || n.Decode(&f) != nil {
		d.wrongType(path, n, "a number")
		return
	}
	if math.IsInf(f, 0) || math.IsNaN(f) {
		d.fail(path, n, "want a finite number, got %s", n.Value)
		return
	}
	v.SetFloat(f)
}

func (d *decoder) duration(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		d.wrongType(path, n, `a duration string such as "100ms"`)
		return
	}
	dur, err := time.ParseDuration(n.Value)
	if err != nil {
		d.fail(path, n, "invalid duration %q", n.Value)
		return
	}
	v.Set(reflect.ValueOf(Duration{dur}))
}

func (d *decoder) integer(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
		if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!float" {
			d.fail(path, n, "want an integer, got %s", n.Value)
			return
		}
		d.wrongType(path, n, "an integer")
		return
	}
	var i int64
	if n.Decode(&i) != nil || v.OverflowInt(i) {
		d.fail(path, n, "integer %s is out of range", n.Value)
		return
	}
	v.SetInt(i)
}

func (d *decoder) list(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.SequenceNode {
		d.wrongType(path, n, "a list")
		return
	}
	if len(n.Content) == 0 {
		return // an empty list is the same as none
	}
	s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, e := range n.Content {
		p := fmt.Sprintf("%s[%d]", path, i)
		d.seen[p] = e.Line
		d.value(e, s.Index(i), p)
	}
	v.Set(s)
}

// object decodes a mapping into a struct, then gives every field the spec
// leaves out its `default`.
func (d *decoder) object(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.wrongType(path, n, "an object")
		return
	}
	t := v.Type()
	keyLines := map[string]int{}
	given := map[int]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			d.fail(path, k, "want field names, got %s as a key", describe(k))
			continue
		}
		p := fieldPath(path, k.Value)
		if first, dup := keyLines[k.Value]; dup {
			d.fail(p, k, "duplicate key, first on line %d", first)
			continue
		}
		keyLines[k.Value] = k.Line
		f, ok := fieldIndex(t, k.Value)
		if !ok {
			d.fail(p, k, "unknown field%s", didYouMean(k.Value, fieldNames(t)))
			continue
		}
		if isNull(val) {
			continue // null is the same as absent
		}
		given[f] = true
		d.seen[p] = k.Line
		d.value(val, v.Field(f), p)
	}
	for f := range t.NumField() {
		if def, ok := t.Field(f).Tag.Lookup("default"); ok && !given[f] {
			setDefault(v.Field(f), def)
		}
	}
}

// setDefault decodes a `default` tag into v. The tags are constants of this
// package and the tests decode every one, so a bad tag is a bug.
func setDefault(v reflect.Value, def string) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(def), &doc); err != nil || len(doc.Content) != 1 {
		panic(fmt.Sprintf("spec: bad default tag %q", def))
	}
	d := newDecoder()
	d.value(doc.Content[0], v, "")
	if len(d.problems) > 0 {
		panic(fmt.Sprintf("spec: bad default tag %q: %v", def, d.problems))
	}
}

// fieldIndex finds the struct field whose json name is name.
func fieldIndex(t reflect.Type, name string) (int, bool) {
	for i := range t.NumField() {
		if jsonName(t.Field(i)) == name {
			return i, true
		}
	}
	return 0, false
}

// fieldNames are the json names of t's fields, in order.
func fieldNames(t reflect.Type) []string {
	names := make([]string, t.NumField())
	for i := range names {
		names[i] = jsonName(t.Field(i))
	}
	return names
}

func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	return name
}

func fieldPath(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}

func isNull(n *yaml.Node) bool {
	for n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// describe names what a node holds, for "want X, got Y" messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "an object"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch tag := n.ShortTag(); tag {
		case "!!str":
			return "a string"
		case "!!int", "!!float":
			return "a number"
		case "!!bool":
			return "a boolean"
		case "!!null":
			return "null"
		default:
			return "a value tagged " + tag
		}
	}
	return "nothing"
}
