package runtime

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"wasmstream.io/platform/runtime/spec"
)

// resolveSharedSpecModules is resolveSpecModules in cluster mode: names
// are read from the shared store, and every module the spec names is made
// sure of there (fetched and compiled here if need be), so that plan.Build
// finds it and a corrupt one is a problem of the field that names it. No
// lock is held while the store answers.
func (m *Manager) resolveSharedSpecModules(js *spec.Job, pinned []JobModule) ([]JobModule, error) {
	ctx, cancel := context.WithTimeout(context.Background(), sharedTimeout)
	defer cancel()
	fixed := map[string]JobModule{}
	for _, p := range pinned {
		fixed[p.Ref] = p
	}
	type site struct {
		path string
		ref  *string
	}
	var sites []site
	walkModuleRefs(reflect.ValueOf(js).Elem(), "", func(path string, ref *string) {
		sites = append(sites, site{path, ref})
	})
	type answer struct {
		mod     JobModule
		problem string
	}
	answers := map[string]answer{}
	var refs []JobModule
	seen := map[string]bool{}
	var problems []string
	for _, s := range sites {
		a, ok := answers[*s.ref]
		if !ok {
			a.mod, a.problem = m.resolveSharedSpecRef(ctx, *s.ref, fixed)
			answers[*s.ref] = a
		}
		if a.problem != "" {
			problems = append(problems, s.path+": "+a.problem)
			continue
		}
		if !seen[a.mod.Ref] {
			seen[a.mod.Ref] = true
			refs = append(refs, a.mod)
		}
		*s.ref = a.mod.ID
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%w: %s", ErrInvalidJob, strings.Join(problems, "; "))
	}
	return refs, nil
}

// resolveSharedSpecRef resolves one module reference of a spec (a pinned
// one as recorded) and makes sure of its module, or says what is wrong. A
// missing module an id names is left to plan.Build to report, as without
// a shared store.
func (m *Manager) resolveSharedSpecRef(ctx context.Context, ref string, fixed map[string]JobModule) (JobModule, string) {
	r, pinned := fixed[ref]
	switch {
	case pinned:
	case strings.HasPrefix(ref, "sha256:"):
		r = JobModule{Ref: ref, ID: ref}
	default:
		var n *moduleName
		if name, _, _ := strings.Cut(ref, "@"); CheckModuleName(name) == nil {
			var err error
			if n, _, err = m.shared.name(ctx, name); err != nil {
				return r, err.Error()
			}
		}
		_, num, err := parseModuleRef(ref)
		if err != nil {
			return r, refProblem(n, ref)
		}
		id, version, err := pickVersion(n, ref, num)
		if err != nil {
			return r, refProblem(n, ref)
		}
		r = JobModule{Ref: ref, ID: id, Version: version}
	}
	_, _, err := m.sharedModule(ctx, r.ID)
	switch {
	case err == nil, errors.Is(err, ErrNotFound) && (pinned || r.Version == ""):
		return r, ""
	case errors.Is(err, ErrNotFound):
		return r, fmt.Sprintf("module %s names %s, which the shared store no longer has", r.Version, r.ID)
	case r.Version != "":
		return r, r.Version + ": " + err.Error()
	default:
		return r, err.Error()
	}
}
