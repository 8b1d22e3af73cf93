package layers

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "wasmstream.io/platform"

// layerTable reads the layer of every package from docs/ARCHITECTURE.md.
func layerTable(t *testing.T, root string) map[string]int {
	t.Helper()
	f, err := os.Open(filepath.Join(root, "docs", "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	layers := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		cells := strings.Split(sc.Text(), "|")
		if len(cells) < 4 {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(cells[1]))
		if err != nil {
			continue
		}
		for _, p := range strings.Split(cells[2], ",") {
			p = strings.TrimSpace(p)
			if _, twice := layers[p]; twice {
				t.Errorf("docs/ARCHITECTURE.md lists %s twice", p)
			}
			layers[p] = n
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(layers) == 0 {
		t.Fatal("docs/ARCHITECTURE.md has no layer table")
	}
	return layers
}

// imports lists the module's packages with their non-test imports inside
// the module, by path relative to the module.
func imports(t *testing.T, root string) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	graph := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := rel(fields[0])
		graph[pkg] = nil
		for _, imp := range fields[1:] {
			if imp == module || strings.HasPrefix(imp, module+"/") {
				graph[pkg] = append(graph[pkg], rel(imp))
			}
		}
	}
	return graph
}

// rel is path relative to the module: "." for the module root.
func rel(path string) string {
	if path == module {
		return "."
	}
	return strings.TrimPrefix(path, module+"/")
}

// TestImportsPointDown checks that every package is in the layer table and
// imports only packages of lower layers, and that the table names no
// package that does not exist.
func TestImportsPointDown(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	layers := layerTable(t, root)
	graph := imports(t, root)
	pkgs := make([]string, 0, len(graph))
	for p := range graph {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	for _, p := range pkgs {
		lp, ok := layers[p]
		if !ok {
			if p != "internal/layers" {
				t.Errorf("%s is in no layer of docs/ARCHITECTURE.md", p)
			}
			continue
		}
		for _, imp := range graph[p] {
			li, ok := layers[imp]
			switch {
			case !ok:
				t.Errorf("%s imports %s, which is in no layer", p, imp)
			case li <= lp:
				t.Errorf("%s (layer %d) imports %s (layer %d): imports must point to a lower layer", p, lp, imp, li)
			}
		}
	}
	for p := range layers {
		if _, ok := graph[p]; !ok {
			t.Errorf("docs/ARCHITECTURE.md lists %s, which is no package", p)
		}
	}
}
