package jsonschema

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

const schema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "properties": {
    "name": {"type": "string", "pattern": "^[a-z]+$"},
    "n": {"type": "integer", "default": 1},
    "mode": {"type": "string", "enum": ["a", "b"]},
    "list": {"type": "array", "items": {"$ref": "#/$defs/Item"}, "minItems": 1},
    "either": {"oneOf": [{"type": "string", "enum": ["a"]}, {"$ref": "#/$defs/Item"}]},
    "both": {"oneOf": [{"type": "string"}, {"type": "string", "enum": ["a"]}]}
  },
  "required": ["name", "list"],
  "additionalProperties": false,
  "$defs": {
    "Item": {"type": "object", "properties": {"on": {"type": "boolean"}}, "additionalProperties": false}
  }
}`

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		doc  string
		want []string
	}{
		{`{"name": "x", "list": [{"on": true}], "n": 2, "mode": "a"}`, nil},
		{`{"name": "x", "list": [{}], "n": 2.0}`, nil},
		{`{}`, []string{`/: "list" is required`, `/: "name" is required`}},
		{`{"name": "X1", "list": [], "n": 1.5, "mode": "c", "extra": null}`, []string{
			`/extra: not allowed`, `/list: want at least 1 items, got 0`, `/mode: "c" is not one of ["a", "b"]`,
			`/n: want integer, got number`, `/name: "X1" does not match ^[a-z]+$`}},
		{`{"name": "x", "list": [{"on": 1, "off": true}, 3]}`, []string{
			`/list/0/off: not allowed`, `/list/0/on: want boolean, got integer`, `/list/1: want object, got integer`}},
		{`[]`, []string{`/: want object, got array`}},
		{`{"name": "x", "list": [{}], "either": "a"}`, nil},
		{`{"name": "x", "list": [{}], "either": {"on": true}, "both": "b"}`, nil},
		{`{"name": "x", "list": [{}], "either": "b"}`, []string{`/either: matches none of oneOf: /either: "b" is not one of ["a"]`}},
		{`{"name": "x", "list": [{}], "either": 3}`, []string{`/either: matches none of oneOf: /either: want string, got integer`}},
		{`{"name": "x", "list": [{}], "both": "a"}`, []string{`/both: matches 2 of oneOf, want exactly one`}},
	} {
		var v any
		if err := json.Unmarshal([]byte(tc.doc), &v); err != nil {
			t.Fatal(err)
		}
		got, err := Validate([]byte(schema), v)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s:\ngot  %s\nwant %s", tc.doc, strings.Join(got, "; "), strings.Join(tc.want, "; "))
		}
	}
}

// TestUnsupportedKeyword: a schema using a keyword the checker does not
// know is an error, not a pass.
func TestUnsupportedKeyword(t *testing.T) {
	for _, s := range []string{`{"type": "string", "maxLength": 3}`, `{"$ref": "#/$defs/Nope"}`, `{"pattern": "["}`} {
		if _, err := Validate([]byte(s), "abcd"); err == nil {
			t.Errorf("%s: no error", s)
		}
	}
}
