package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"wasmstream.io/platform/runtime/spec"
)

// openAPI is the OpenAPI 3.1 document of the routes the server serves,
// generated from the route table: paths and methods, query parameters,
// request bodies, the success answers with schemas generated from the Go
// types the handlers encode, and every problem the route answers with.
func openAPI(routes []route) []byte {
	g := &typeSchemas{schemas: map[string]any{}}
	g.schemas["Problem"] = problemSchema()
	paths := map[string]map[string]any{}
	for _, rt := range routes {
		op := map[string]any{"operationId": rt.op, "summary": rt.summary}
		var params []any
		for _, m := range pathParams.FindAllStringSubmatch(rt.path, -1) {
			params = append(params, map[string]any{"name": m[1], "in": "path", "required": true, "schema": map[string]any{"type": "string"}})
		}
		for _, q := range rt.query {
			params = append(params, map[string]any{"name": q.name, "in": "query", "description": q.doc, "schema": map[string]any{"type": "string"}})
		}
		if len(params) > 0 {
			op["parameters"] = params
		}
		if rt.body != nil {
			content := map[string]any{}
			schema := rt.body.schema
			if t, ok := schema.(reflect.Type); ok {
				// A JSON body decoded into a Go value.
				schema = g.of(t)
			}
			for _, t := range rt.body.types {
				if t != "" {
					content[t] = map[string]any{"schema": schema}
				}
			}
			op["requestBody"] = map[string]any{"required": true, "description": rt.body.doc, "content": content}
		}
		responses := map[string]any{}
		for _, a := range rt.ok {
			r := map[string]any{"description": a.doc}
			switch {
			case a.value != nil:
				r["content"] = map[string]any{"application/json": map[string]any{"schema": g.of(reflect.TypeOf(a.value))}}
			case a.contentType != "":
				content := map[string]any{}
				for _, t := range strings.Split(a.contentType, ", ") {
					content[t] = map[string]any{}
				}
				r["content"] = content
			}
			responses[strconv.Itoa(a.status)] = r
		}
		for status, types := range problemsByStatus(rt) {
			responses[strconv.Itoa(status)] = map[string]any{
				"description": "problem details of type " + strings.Join(types, ", "),
				"content":     map[string]any{"application/problem+json": map[string]any{"schema": map[string]any{"$ref": "#/components/schemas/Problem"}}},
			}
		}
		// Any route answers 500 for an internal error (or a panic).
		responses["default"] = map[string]any{
			"description": "problem details of type about:blank (Internal Server Error): an internal error; detail gives the request id",
			"content":     map[string]any{"application/problem+json": map[string]any{"schema": map[string]any{"$ref": "#/components/schemas/Problem"}}},
		}
		if strings.HasPrefix(rt.path, "/v1/") {
			// The token is needed only when the server has one.
			op["security"] = []any{map[string]any{"bearer": []string{}}, map[string]any{}}
		}
		op["responses"] = responses
		if paths[rt.path] == nil {
			paths[rt.path] = map[string]any{}
		}
		paths[rt.path][strings.ToLower(rt.method)] = op
	}
	doc := map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{
			"title":       "platform",
			"version":     "v1",
			"description": "The control plane of the platform (docs/API.md). With api.token set, every /v1 request needs Authorization: Bearer <token>.",
		},
		"paths":      paths,
		"components": map[string]any{"schemas": g.schemas, "securitySchemes": map[string]any{"bearer": map[string]any{"type": "http", "scheme": "bearer"}}},
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		panic(fmt.Sprintf("api: marshal the OpenAPI document: %v", err)) // maps, strings and numbers only
	}
	return append(out, '\n')
}

// pathParams finds a route path's wildcards.
var pathParams = regexp.MustCompile(`\{([a-z_]+)\}`)

// problemsByStatus groups the problem types a route answers with by
// status; /v1 routes add the 401 of a missing or wrong token.
func problemsByStatus(rt route) map[int][]string {
	kinds := slices.Clone(rt.kinds)
	if strings.HasPrefix(rt.path, "/v1/") {
		kinds = append(kinds, unauthenticated)
	}
	out := map[int][]string{}
	for _, k := range kinds {
		e := catalogue[k]
		name := e.typ
		if name == "about:blank" {
			name += " (" + e.title + ")"
		}
		out[e.status] = append(out[e.status], name)
	}
	return out
}

func problemSchema() map[string]any {
	str := map[string]any{"type": "string"}
	integer := map[string]any{"type": "integer"}
	return map[string]any{
		"type":     "object",
		"required": []string{"type", "title", "status"},
		"properties": map[string]any{
			"type": str, "title": str, "status": integer, "detail": str,
			"problems": map[string]any{"type": "array", "items": map[string]any{
				"type": "object", "required": []string{"message"},
				"properties": map[string]any{"field": str, "message": str, "line": integer},
			}},
			"limit": integer,
		},
	}
}

// typeSchemas makes JSON Schemas of the Go types the handlers encode, as
// encoding/json writes them; named struct types become components.
type typeSchemas struct {
	schemas map[string]any
}

var timeType = reflect.TypeFor[time.Time]()

func (g *typeSchemas) of(t reflect.Type) map[string]any {
	switch {
	case t == timeType:
		return map[string]any{"type": "string", "format": "date-time"}
	case t.Kind() == reflect.Pointer:
		return g.of(t.Elem())
	case t.Kind() == reflect.Struct && t.Name() != "":
		name := t.Name()
		if _, ok := g.schemas[name]; !ok {
			g.schemas[name] = nil // taken, for types that refer to themselves
			g.schemas[name] = g.object(t)
		}
		return map[string]any{"$ref": "#/components/schemas/" + name}
	case t.Kind() == reflect.Struct:
		return g.object(t)
	}
	switch t.Kind() {
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Uint64, reflect.Uint32, reflect.Uint:
		return map[string]any{"type": "integer"}
	case reflect.Float64, reflect.Float32:
		return map[string]any{"type": "number"}
	case reflect.Slice:
		return map[string]any{"type": "array", "items": g.of(t.Elem())}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": g.of(t.Elem())}
	}
	panic(fmt.Sprintf("api: no schema for %s", t))
}

// object is the schema of a struct: its json fields, embedded structs'
// fields in line; a field without omitempty or omitzero is required, and
// may be null when it is a pointer or a slice.
func (g *typeSchemas) object(t reflect.Type) map[string]any {
	props := map[string]any{}
	var required []string
	var fields func(t reflect.Type)
	fields = func(t reflect.Type) {
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			if tag == "-" || !f.IsExported() {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			if f.Anonymous && name == "" {
				fields(f.Type)
				continue
			}
			if name == "" {
				name = f.Name
			}
			s := g.of(f.Type)
			optional := strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero")
			if !optional {
				required = append(required, name)
				if k := f.Type.Kind(); k == reflect.Pointer || k == reflect.Slice {
					s = map[string]any{"oneOf": []any{s, map[string]any{"type": "null"}}}
				}
			}
			props[name] = s
		}
	}
	fields(t)
	o := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		o["required"] = required
	}
	return o
}

// openAPIDoc serves the document of this server's routes.
func (s *server) openAPIDoc(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(s.openapi)
}

var jobSchemaJSON = spec.JSONSchema()

// jobSchema serves the JSON Schema of a job spec.
func jobSchema(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/schema+json")
	_, _ = w.Write(jobSchemaJSON)
}
