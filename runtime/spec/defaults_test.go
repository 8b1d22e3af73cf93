package spec

import (
	"reflect"
	"testing"
)

// TestDefaultTags decodes every `default` tag of every type a Job holds, so
// a bad tag fails here rather than in Parse.
func TestDefaultTags(t *testing.T) {
	seen := map[reflect.Type]bool{}
	count := 0
	var walk func(typ reflect.Type)
	walk = func(typ reflect.Type) {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct || typ == durationType || seen[typ] {
			return
		}
		seen[typ] = true
		for i := range typ.NumField() {
			f := typ.Field(i)
			if def, ok := f.Tag.Lookup("default"); ok {
				count++
				t.Run(typ.Name()+"."+f.Name, func(t *testing.T) {
					defer func() {
						if r := recover(); r != nil {
							t.Errorf("default %q: %v", def, r)
						}
					}()
					setDefault(reflect.New(f.Type).Elem(), def)
				})
			}
			walk(f.Type)
		}
	}
	walk(reflect.TypeFor[Job]())
	if count != 38 {
		t.Errorf("found %d default tags, want 38", count)
	}
}
