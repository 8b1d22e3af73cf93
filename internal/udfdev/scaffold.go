package udfdev

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"text/template"
)

// Languages are the languages Scaffold writes projects in.
var Languages = []string{"go", "rust", "c", "assemblyscript"}

//go:embed all:templates
var templates embed.FS

// validName is a project name: it names the module file, the Go module and
// the Rust crate.
var validName = regexp.MustCompile(`^[a-z][a-z0-9_-]*$`)

// Project says what Scaffold writes.
type Project struct {
	// Name is the project's name: lower-case letters, digits, '-' and '_',
	// starting with a letter. The module it builds is Name.wasm.
	Name string
	// Lang is one of Languages.
	Lang string
	// Dir is the new project's directory; it must not exist or be empty.
	Dir string
	// Platform is the platform repository's root, whose SDKs the project
	// builds with.
	Platform string
}

// Scaffold writes a project that builds Name.wasm with `make`, with one map
// function, shout, and a test that `make test` runs: the language's own
// tests, where it has them, and `platform udf test` over testdata/input.jsonl
// compared with testdata/want.jsonl.
func Scaffold(p Project) error {
	if !validName.MatchString(p.Name) {
		return fmt.Errorf("name %q: use lower-case letters, digits, '-' and '_', starting with a letter", p.Name)
	}
	if !validLang(p.Lang) {
		return fmt.Errorf("language %q: want one of %s", p.Lang, strings.Join(Languages, ", "))
	}
	if entries, err := os.ReadDir(p.Dir); err == nil && len(entries) > 0 {
		return fmt.Errorf("directory %s is not empty", p.Dir)
	}
	dir, err := filepath.Abs(p.Dir)
	if err != nil {
		return err
	}
	root, err := filepath.Abs(p.Platform)
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(root, "sdk", "go", "register.go")); err != nil {
		return fmt.Errorf("%s is not the platform repository (no sdk/go): %w", p.Platform, err)
	}
	rel, err := filepath.Rel(dir, root)
	if err != nil {
		return err
	}
	goVersion, err := goDirective(filepath.Join(root, "go.mod"))
	if err != nil {
		return err
	}
	data := templateData{p.Name, strings.ReplaceAll(p.Name, "-", "_"), filepath.ToSlash(rel), goVersion}
	for _, base := range []string{"templates/common", "templates/" + p.Lang} {
		if err := render(base, dir, data); err != nil {
			return err
		}
	}
	return nil
}

// templateData is what the templates see: the project's name, its name as a
// Rust crate, the platform repository's root relative to the project, and
// the Go version of the platform's module, which a Go project needs too.
type templateData struct {
	Name, Crate, Platform, Go string
}

// goDirective reads the go line of a go.mod.
func goDirective(gomod string) (string, error) {
	text, err := os.ReadFile(gomod)
	if err != nil {
		return "", err
	}
	for line := range strings.Lines(string(text)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "go "); ok {
			return v, nil
		}
	}
	return "", fmt.Errorf("%s has no go line", gomod)
}

func validLang(lang string) bool {
	for _, l := range Languages {
		if l == lang {
			return true
		}
	}
	return false
}

// render writes the files under base, executing those named *.tmpl as
// templates (without the suffix) and renaming NAME in paths to the
// project's name.
func render(base, dir string, data templateData) error {
	return fs.WalkDir(templates, base, func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		content, err := templates.ReadFile(name)
		if err != nil {
			return err
		}
		target := strings.ReplaceAll(strings.TrimPrefix(name, base+"/"), "NAME", data.Name)
		if strings.HasSuffix(target, ".tmpl") {
			target = strings.TrimSuffix(target, ".tmpl")
			t, err := template.New(path.Base(name)).Delims("[[", "]]").Parse(string(content))
			if err != nil {
				return err
			}
			var b bytes.Buffer
			if err := t.Execute(&b, data); err != nil {
				return err
			}
			content = b.Bytes()
		}
		out := filepath.Join(dir, filepath.FromSlash(target))
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		return os.WriteFile(out, content, 0o644)
	})
}

// FindPlatform returns the platform repository's root: dir or the nearest
// directory above it whose go.mod is the platform's module.
func FindPlatform(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if mod, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && bytes.HasPrefix(mod, []byte("module wasmstream.io/platform\n")) {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no platform repository at or above %s: give its root with --platform", dir)
		}
	}
}
