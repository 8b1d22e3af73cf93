package api

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// TestCatalogueEntries: every kind has an entry; a type and status pair
// names one kind; the API's own types live under problemBase, each once,
// and about:blank ones are titled with their status text.
func TestCatalogueEntries(t *testing.T) {
	seen := map[string]kind{}
	for k := kind(0); k < numKinds; k++ {
		e := catalogue[k]
		if e.typ == "" || e.title == "" || e.status < 400 || e.status > 599 {
			t.Errorf("kind %d: incomplete entry %+v", k, e)
			continue
		}
		key := e.typ
		if e.typ == "about:blank" {
			key += " " + strconv.Itoa(e.status)
			if e.title != http.StatusText(e.status) {
				t.Errorf("kind %d: about:blank %d titled %q, want %q", k, e.status, e.title, http.StatusText(e.status))
			}
		} else if !strings.HasPrefix(e.typ, problemBase) {
			t.Errorf("kind %d: type %q is not under %s", k, e.typ, problemBase)
		}
		if other, dup := seen[key]; dup {
			t.Errorf("kinds %d and %d are both %s", other, k, key)
		}
		seen[key] = k
	}
}

// TestProblemsComeFromTheCatalogue reads the package's source: a problem
// value is built only by kind.problem, problem types are declared only in
// the catalogue, no code converts a number to a kind or rewrites a
// problem's type, title or status, and every kind is used by some handler.
func TestProblemsComeFromTheCatalogue(t *testing.T) {
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	used := map[string]bool{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, violation := range catalogueViolations(f, name == "catalogue.go", kinds, used) {
			t.Errorf("%s: %s", fset.Position(violation.pos), violation.what)
		}
	}
	if len(kinds) != int(numKinds) {
		t.Fatalf("found %d kind constants in catalogue.go, want %d", len(kinds), numKinds)
	}
	for k := range kinds {
		if !used[k] {
			t.Errorf("kind %s is in the catalogue but no code answers with it", k)
		}
	}
}

type violation struct {
	pos  token.Pos
	what string
}

// catalogueViolations lists what in f builds problems past the catalogue.
// It records the kind constants declared (in the catalogue's file) and
// those referred to (in the other files).
func catalogueViolations(f *ast.File, isCatalogue bool, kinds, used map[string]bool) []violation {
	var out []violation
	for _, decl := range f.Decls {
		fn, isFunc := decl.(*ast.FuncDecl)
		if gd, ok := decl.(*ast.GenDecl); ok && isCatalogue && isKindConsts(gd) {
			for _, spec := range gd.Specs {
				for _, n := range spec.(*ast.ValueSpec).Names {
					if n.Name != "numKinds" {
						kinds[n.Name] = true
					}
				}
			}
			continue
		}
		buildsProblems := isFunc && fn.Name.Name == "problem" && fn.Recv != nil
		declaresTypes := isCatalogue && (isFunc && fn.Name.Name == "blank" || isVar(decl, "catalogue"))
		ast.Inspect(decl, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CompositeLit:
				switch typeName(n.Type) {
				case "problem":
					if !buildsProblems {
						out = append(out, violation{n.Pos(), "a problem literal: build problems with kind.problem"})
					}
				case "kindInfo":
					if !declaresTypes {
						out = append(out, violation{n.Pos(), "a problem type outside the catalogue"})
					}
				}
			case *ast.CallExpr:
				if id, ok := n.Fun.(*ast.Ident); ok && id.Name == "kind" && !isCatalogue {
					out = append(out, violation{n.Pos(), "a conversion to kind: name a kind of the catalogue"})
				}
			case *ast.AssignStmt:
				for _, lhs := range n.Lhs {
					if sel, ok := lhs.(*ast.SelectorExpr); ok && (sel.Sel.Name == "Type" || sel.Sel.Name == "Title" || sel.Sel.Name == "Status") {
						out = append(out, violation{n.Pos(), "sets a problem's " + sel.Sel.Name + ": it comes from its kind"})
					}
				}
			case *ast.Ident:
				if !isCatalogue {
					used[n.Name] = true
				}
			}
			return true
		})
	}
	return out
}

func typeName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.ArrayType:
		return typeName(e.Elt)
	}
	return ""
}

// isKindConsts says whether gd is the const block that declares the kinds.
func isKindConsts(gd *ast.GenDecl) bool {
	if gd.Tok != token.CONST || len(gd.Specs) == 0 {
		return false
	}
	return typeName(gd.Specs[0].(*ast.ValueSpec).Type) == "kind"
}

func isVar(decl ast.Decl, name string) bool {
	gd, ok := decl.(*ast.GenDecl)
	if !ok || gd.Tok != token.VAR {
		return false
	}
	for _, spec := range gd.Specs {
		for _, n := range spec.(*ast.ValueSpec).Names {
			if n.Name == name {
				return true
			}
		}
	}
	return false
}

// docProblemTypes reads the table of problem types in docs/API.md's
// "Errors" section: its rows as "type | title | status".
func docProblemTypes(t *testing.T, doc string) []string {
	t.Helper()
	const header = "| type | title | status | when |"
	start := strings.Index(doc, header)
	if start < 0 {
		t.Fatalf("docs/API.md has no table headed %q", header)
	}
	lines := strings.Split(doc[start:], "\n")[2:]
	var rows []string
	for _, line := range lines {
		if !strings.HasPrefix(line, "|") {
			break
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) != 4 {
			t.Fatalf("docs/API.md problem types: row %q has %d cells, want 4", line, len(cells))
		}
		for i := range cells {
			cells[i] = strings.Trim(strings.TrimSpace(cells[i]), "`")
		}
		rows = append(rows, cells[0]+" | "+cells[1]+" | "+cells[2])
	}
	return rows
}

// TestAPIDocListsTheCatalogue: docs/API.md's table of problem types lists
// exactly the catalogue, with the same titles and statuses, and every
// "<status> `<name>`" the route tables mention is a kind of the catalogue
// with that status.
func TestAPIDocListsTheCatalogue(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "docs", "API.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	var want []string
	for _, e := range catalogue {
		want = append(want, fmt.Sprintf("%s | %s | %d", e.typ, e.title, e.status))
	}
	got := docProblemTypes(t, doc)
	sort.Strings(want)
	sort.Strings(got)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("docs/API.md lists the problem types\n%s\nthe catalogue has\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	statusOf := map[string]int{}
	for _, e := range catalogue {
		if name, ok := strings.CutPrefix(e.typ, problemBase); ok {
			statusOf[name] = e.status
		}
	}
	refs := regexp.MustCompile("([0-9]{3}) `([a-z-]+)`").FindAllStringSubmatch(doc, -1)
	if len(refs) == 0 {
		t.Fatal("docs/API.md names no problem type by status and name")
	}
	for _, ref := range refs {
		if status, ok := statusOf[ref[2]]; !ok || strconv.Itoa(status) != ref[1] {
			t.Errorf("docs/API.md mentions %s `%s`; the catalogue has %q with status %d", ref[1], ref[2], ref[2], status)
		}
	}
}
