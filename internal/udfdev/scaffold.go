package udfdev

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"text/template"

	"wasmstream.io/platform"
)

// Languages are the languages Scaffold writes projects in.
var Languages = []string{"go", "rust", "c", "assemblyscript"}

// SDKVersion is the version of the SDKs: of the Rust crate and the npm
// package, and the version a Go project requires the Go SDK's module at.
const SDKVersion = "1.0.0"

// GoSDKModule is the module path of the Go SDK's copy in a project. Its
// import path is the same inside the platform repository, where the SDK is
// a package of the platform's module.
const GoSDKModule = "wasmstream.io/platform/sdk/go"

// GoSDKGo is the go line of the Go SDK's copy and of a project that uses
// it: Go 1.24 is the first with go:wasmexport, which the SDK's exports need.
const GoSDKGo = "1.24"

// SDKDir is where Scaffold writes the copy of each language's SDK, relative
// to the project.
var SDKDir = map[string]string{
	"go":             "third_party/platform-sdk-go",
	"rust":           "third_party/platform-udf",
	"c":              "third_party/platform-sdk-c",
	"assemblyscript": "third_party/platform-udf",
}

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
	// Platform, when set, is a platform repository whose SDK the project
	// builds with where it is, for working on the SDKs themselves. Empty
	// writes a copy of the SDK into the project (SDKDir), from the sources
	// built into this binary, and the project builds anywhere.
	Platform string
}

// Scaffold writes a project that builds Name.wasm with `make`, with one map
// function, shout; a test that `make test` runs: the language's own tests,
// where it has them, and `platform udf test` over testdata/input.jsonl
// compared with testdata/want.jsonl; a job.yaml that runs shout between two
// streams, and a `make deploy` that uploads the module and submits the job.
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
	asc, err := ascVersion()
	if err != nil {
		return err
	}
	crate := strings.ReplaceAll(p.Name, "-", "_")
	data := templateData{Name: p.Name, Lang: p.Lang, Crate: crate, Stream: strings.ToUpper(crate), Version: SDKVersion, Asc: asc}
	if p.Platform == "" {
		data.SDK, data.Go = SDKDir[p.Lang], GoSDKGo
	} else {
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
		if data.Go, err = goDirective(filepath.Join(root, "go.mod")); err != nil {
			return err
		}
		data.Platform = filepath.ToSlash(rel)
		data.SDK = path.Join(data.Platform, "sdk", sdkSource[p.Lang])
	}
	for _, base := range []string{"templates/common", "templates/" + p.Lang} {
		if err := render(base, dir, data); err != nil {
			return err
		}
	}
	if p.Platform == "" {
		return WriteSDK(p.Lang, filepath.Join(dir, filepath.FromSlash(SDKDir[p.Lang])))
	}
	return nil
}

// templateData is what the templates see: the project's name and language,
// its name as a Rust crate and in upper case (for the streams of its job), the SDKs'
// version, the path of the SDK relative to the project, the Go version of
// a Go project, the version of the AssemblyScript compiler, and, when the
// project uses a platform repository's SDK, the repository relative to the
// project.
type templateData struct {
	Name, Lang, Crate, Stream, Version, SDK, Go, Asc, Platform string
}

// sdkSource is each language's SDK under the repository's sdk/.
var sdkSource = map[string]string{"go": "go", "rust": "rust", "c": "c", "assemblyscript": "assemblyscript"}

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

// ascVersion is the AssemblyScript compiler the SDK's package is developed
// with, which an AssemblyScript project installs too.
func ascVersion() (string, error) {
	text, err := platform.SDKs.ReadFile("sdk/assemblyscript/package.json")
	if err != nil {
		return "", err
	}
	var pkg struct {
		DevDependencies map[string]string `json:"devDependencies"`
	}
	if err := json.Unmarshal(text, &pkg); err != nil {
		return "", fmt.Errorf("sdk/assemblyscript/package.json: %w", err)
	}
	v := pkg.DevDependencies["assemblyscript"]
	if v == "" {
		return "", fmt.Errorf("sdk/assemblyscript/package.json: no devDependency assemblyscript")
	}
	return v, nil
}

func validLang(lang string) bool {
	for _, l := range Languages {
		if l == lang {
			return true
		}
	}
	return false
}

// partials are templates every *.tmpl file may use, by their file names.
const partials = "templates/partials"

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
			t := template.New(path.Base(name)).Delims("[[", "]]")
			if _, err := t.ParseFS(templates, partials+"/*"); err != nil {
				return err
			}
			if _, err := t.Parse(string(content)); err != nil {
				return err
			}
			var b bytes.Buffer
			if err := t.Execute(&b, data); err != nil {
				return err
			}
			content = b.Bytes()
		}
		return writeFile(filepath.Join(dir, filepath.FromSlash(target)), content)
	})
}

func writeFile(name string, content []byte) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	return os.WriteFile(name, content, 0o644)
}

// abiImport is how the Go SDK imports the abi package, and abiCopy where the
// package is in the SDK's copy: a package of the SDK's own module, so that
// the copy is one module that needs nothing else.
const (
	abiImport = `"wasmstream.io/platform/abi"`
	abiCopy   = `"wasmstream.io/platform/sdk/go/internal/abi"`
)

// WriteSDK writes the copy of lang's SDK a project builds with into dir,
// from the sources built into this binary, without tests and test data:
//
//   - go: the module GoSDKModule, the packages of sdk/go with the platform's
//     abi package as its internal/abi;
//   - rust: the crate platform-udf (sdk/rust);
//   - c: platform_udf.h and platform_udf.c, the JSON helpers
//     platform_json.h and platform_json.c, and the native test harness
//     platform_harness.h, platform_harness.c and platform_harness_script.c
//     (sdk/c);
//   - assemblyscript: the npm package platform-udf (sdk/assemblyscript).
func WriteSDK(lang, dir string) error {
	src, ok := sdkSource[lang]
	if !ok {
		return fmt.Errorf("language %q: want one of %s", lang, strings.Join(Languages, ", "))
	}
	if err := copySDK("sdk/"+src, dir, lang == "go"); err != nil {
		return err
	}
	if lang != "go" {
		return nil
	}
	if err := copySDK("abi", filepath.Join(dir, "internal", "abi"), false); err != nil {
		return err
	}
	return writeFile(filepath.Join(dir, "go.mod"), []byte("module "+GoSDKModule+"\n\ngo "+GoSDKGo+"\n"))
}

// copySDK copies the files under base in platform.SDKs to dir, leaving out
// Go tests and testdata; with rewrite, it points the Go files' abi imports
// at the SDK's copy of abi.
func copySDK(base, dir string, rewrite bool) error {
	return fs.WalkDir(platform.SDKs, base, func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "testdata" {
				return fs.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, "_test.go") {
			return nil
		}
		content, err := platform.SDKs.ReadFile(name)
		if err != nil {
			return err
		}
		if rewrite && strings.HasSuffix(name, ".go") {
			content = bytes.ReplaceAll(content, []byte(abiImport), []byte(abiCopy))
		}
		return writeFile(filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(name, base+"/"))), content)
	})
}
