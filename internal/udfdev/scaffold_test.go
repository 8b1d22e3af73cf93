package udfdev

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"wasmstream.io/platform"
	"wasmstream.io/platform/internal/wasmbuild"
)

func TestScaffoldRefuses(t *testing.T) {
	root := wasmbuild.Root()
	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		p    Project
		want string
	}{
		{"bad name", Project{Name: "Bad Name", Lang: "go", Dir: t.TempDir()}, `name "Bad Name": use lower-case letters`},
		{"bad language", Project{Name: "x", Lang: "cobol", Dir: t.TempDir()}, `language "cobol": want one of go, rust, c, assemblyscript`},
		{"directory not empty", Project{Name: "x", Lang: "c", Dir: full}, "is not empty"},
		{"directory not empty, linked", Project{Name: "x", Lang: "c", Dir: full, Platform: root}, "is not empty"},
		{"not the platform", Project{Name: "x", Lang: "c", Dir: t.TempDir(), Platform: t.TempDir()}, "is not the platform repository"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := Scaffold(tt.p); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want it to contain %q", err, tt.want)
			}
		})
	}
	if err := WriteSDK("cobol", t.TempDir()); err == nil || err.Error() != `language "cobol": want one of go, rust, c, assemblyscript` {
		t.Fatalf("WriteSDK: error %v", err)
	}
}

// files lists the files under dir, relative and with slashes.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	err := filepath.WalkDir(dir, func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, name)
		names = append(names, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}

func read(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// sdkFiles are the files of an SDK in the repository that its copy holds:
// everything under dir but Go tests and testdata (and node_modules and the
// lock file, which are not the package's).
func sdkFiles(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	for _, name := range files(t, dir) {
		switch {
		case strings.HasSuffix(name, "_test.go"), strings.Contains(name, "testdata/"), strings.HasPrefix(name, "node_modules/"),
			name == "package-lock.json", name == ".gitignore", strings.HasPrefix(name, "target/"), name == "Cargo.lock":
			continue
		}
		names = append(names, name)
	}
	return names
}

// TestScaffoldWritesSDK scaffolds a project in every language without a
// platform repository and checks what it holds: the project's files, its
// reference to the SDK's copy, and the copy, file for file the SDK of this
// repository (the Go SDK with its abi imports pointed at its own copy).
func TestScaffoldWritesSDK(t *testing.T) {
	root := wasmbuild.Root()
	project := map[string][]string{
		"go":             {".gitignore", "Makefile", "README.md", "go.mod", "job.yaml", "main.go", "main_test.go"},
		"rust":           {".cargo/config.toml", ".gitignore", "Cargo.toml", "Makefile", "README.md", "job.yaml", "lib.rs"},
		"c":              {".gitignore", "Makefile", "README.md", "job.yaml", "my-udf.c"},
		"assemblyscript": {".gitignore", "Makefile", "README.md", "asconfig.json", "index.ts", "job.yaml", "package.json"},
	}
	for _, lang := range Languages {
		t.Run(lang, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "my-udf")
			if err := Scaffold(Project{Name: "my-udf", Lang: lang, Dir: dir}); err != nil {
				t.Fatal(err)
			}
			sdk := SDKDir[lang]
			var own []string
			for _, name := range files(t, dir) {
				if !strings.HasPrefix(name, sdk+"/") {
					own = append(own, name)
				}
			}
			want := append(slices.Clone(project[lang]), "testdata/input.jsonl", "testdata/want.jsonl")
			slices.Sort(want)
			if !slices.Equal(own, want) {
				t.Fatalf("project files %q, want %q", own, want)
			}

			repoSDK := filepath.Join(root, "sdk", sdkSource[lang])
			copied := files(t, filepath.Join(dir, sdk))
			wantSDK := sdkFiles(t, repoSDK)
			if lang == "go" {
				for _, name := range sdkFiles(t, filepath.Join(root, "abi")) {
					wantSDK = append(wantSDK, "internal/abi/"+name)
				}
				wantSDK = append(wantSDK, "go.mod")
				slices.Sort(wantSDK)
			}
			if !slices.Equal(copied, wantSDK) {
				t.Fatalf("SDK copy %q, want %q", copied, wantSDK)
			}
			for _, name := range copied {
				got := read(t, filepath.Join(dir, sdk, name))
				var orig string
				switch {
				case name == "go.mod":
					if want := "module wasmstream.io/platform/sdk/go\n\ngo 1.24\n"; got != want {
						t.Fatalf("go.mod of the copy is %q, want %q", got, want)
					}
					continue
				case strings.HasPrefix(name, "internal/abi/"):
					orig = read(t, filepath.Join(root, "abi", strings.TrimPrefix(name, "internal/abi/")))
				default:
					orig = read(t, filepath.Join(repoSDK, name))
				}
				if lang == "go" {
					orig = strings.ReplaceAll(orig, `"wasmstream.io/platform/abi"`, `"wasmstream.io/platform/sdk/go/internal/abi"`)
				}
				if got != orig {
					t.Fatalf("%s of the copy differs from the repository's", name)
				}
				if strings.Contains(got, `"wasmstream.io/platform/abi"`) {
					t.Fatalf("%s of the copy imports the platform's abi", name)
				}
			}

			refs := map[string][2]string{
				"go":             {"go.mod", "require wasmstream.io/platform/sdk/go v1.0.0\n"},
				"rust":           {"Cargo.toml", `platform-udf = { path = "third_party/platform-udf", version = "1.0.0" }` + "\n"},
				"c":              {"Makefile", "SDK ?= third_party/platform-sdk-c\n"},
				"assemblyscript": {"package.json", `"platform-udf": "file:third_party/platform-udf"`},
			}
			if ref := refs[lang]; !strings.Contains(read(t, filepath.Join(dir, ref[0])), ref[1]) {
				t.Fatalf("%s does not say %q:\n%s", ref[0], ref[1], read(t, filepath.Join(dir, ref[0])))
			}
			if lang == "go" {
				if got := read(t, filepath.Join(dir, "go.mod")); !strings.Contains(got, "\nreplace wasmstream.io/platform/sdk/go => ./third_party/platform-sdk-go\n") ||
					!strings.HasPrefix(got, "module my-udf\n\ngo 1.24\n") {
					t.Fatalf("go.mod:\n%s", got)
				}
			}
			checkDeploy(t, dir)
		})
	}
}

// checkDeploy checks a project's job.yaml and the Makefile's streams and
// deploy targets.
func checkDeploy(t *testing.T, dir string) {
	t.Helper()
	var job struct {
		Name    string `yaml:"name"`
		Sources []struct {
			ID        string `yaml:"id"`
			JetStream struct {
				Stream   string   `yaml:"stream"`
				Subjects []string `yaml:"subjects"`
			} `yaml:"jetstream"`
		} `yaml:"sources"`
		Operators []struct {
			ID, Input string
			Map       struct{ Module, Function string } `yaml:"map"`
		} `yaml:"operators"`
		Sinks []struct {
			Input     string `yaml:"input"`
			JetStream struct {
				Subject string `yaml:"subject"`
			} `yaml:"jetstream"`
		} `yaml:"sinks"`
	}
	if err := yaml.Unmarshal([]byte(read(t, filepath.Join(dir, "job.yaml"))), &job); err != nil {
		t.Fatal(err)
	}
	if job.Name != "my-udf" || len(job.Sources) != 1 || job.Sources[0].JetStream.Stream != "MY_UDF_IN" ||
		!slices.Equal(job.Sources[0].JetStream.Subjects, []string{"my-udf.in"}) ||
		len(job.Operators) != 1 || job.Operators[0].Map.Module != "${MODULE}" || job.Operators[0].Map.Function != "shout" ||
		job.Operators[0].Input != job.Sources[0].ID ||
		len(job.Sinks) != 1 || job.Sinks[0].Input != job.Operators[0].ID || job.Sinks[0].JetStream.Subject != "my-udf.out" {
		t.Fatalf("job.yaml is %+v", job)
	}
	makefile := read(t, filepath.Join(dir, "Makefile"))
	for _, want := range []string{
		"\nstreams:\n\t$(PLATFORM_CLI) stream add MY_UDF_IN --subjects 'my-udf.in' --nats $(PLATFORM_NATS)\n" +
			"\t$(PLATFORM_CLI) stream add MY_UDF_OUT --subjects 'my-udf.out' --nats $(PLATFORM_NATS)\n",
		"\ndeploy: $(OUT)\n\tmodule=$$($(PLATFORM_CLI) module push $(OUT) -o id) && \\\n" +
			"\tsed 's/\\$${MODULE}/'\"$$module\"'/' job.yaml | $(PLATFORM_CLI) job submit -\n",
		"\nOUT ?= my-udf.wasm\n",
	} {
		if !strings.Contains(makefile, want) {
			t.Fatalf("Makefile lacks %q:\n%s", want, makefile)
		}
	}
	if regexp.MustCompile(`\[\[|\]\]`).MatchString(makefile + read(t, filepath.Join(dir, "README.md"))) {
		t.Fatal("a template was not executed")
	}
}

// TestScaffoldLinked scaffolds projects that use this repository's SDKs in
// place: no copy, and references relative to the project.
func TestScaffoldLinked(t *testing.T) {
	root, err := filepath.Abs(wasmbuild.Root())
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "linked")
	rel, err := filepath.Rel(dir, root)
	if err != nil {
		t.Fatal(err)
	}
	rel = filepath.ToSlash(rel)
	wants := map[string][2]string{
		"go":             {"go.mod", "require wasmstream.io/platform v0.0.0\n\nreplace wasmstream.io/platform => " + rel + "\n"},
		"rust":           {"Cargo.toml", `platform-udf = { path = "` + rel + `/sdk/rust", version = "1.0.0" }`},
		"c":              {"Makefile", "SDK ?= " + rel + "/sdk/c\n"},
		"assemblyscript": {"package.json", `"platform-udf": "file:` + rel + `/sdk/assemblyscript"`},
	}
	for _, lang := range Languages {
		os.RemoveAll(dir)
		if err := Scaffold(Project{Name: "linked", Lang: lang, Dir: dir, Platform: root}); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(dir, "third_party")); !os.IsNotExist(err) {
			t.Fatalf("%s: third_party: %v, want none", lang, err)
		}
		if got := read(t, filepath.Join(dir, wants[lang][0])); !strings.Contains(got, wants[lang][1]) {
			t.Fatalf("%s: %s lacks %q:\n%s", lang, wants[lang][0], wants[lang][1], got)
		}
	}
}

// TestScaffoldSDKMetadata checks that the SDK packages carry the version
// Scaffold requires them at and the metadata a registry needs.
func TestScaffoldSDKMetadata(t *testing.T) {
	cargo, err := platform.SDKs.ReadFile("sdk/rust/Cargo.toml")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\nname = \"platform-udf\"\n", "\nversion = \"" + SDKVersion + "\"\n", "\nlicense = \"", "\ndescription = \"", "\nreadme = \"README.md\"\n"} {
		if !strings.Contains(string(cargo), want) {
			t.Errorf("sdk/rust/Cargo.toml lacks %q", want)
		}
	}
	if strings.Contains(string(cargo), "publish") {
		t.Error("sdk/rust/Cargo.toml restricts publishing")
	}
	text, err := platform.SDKs.ReadFile("sdk/assemblyscript/package.json")
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		Name, Version, Main, AscMain, License, Description string
		Private                                            *bool
		Files                                              []string
		Peer                                               map[string]string `json:"peerDependencies"`
	}
	if err := json.Unmarshal(text, &pkg); err != nil {
		t.Fatal(err)
	}
	if pkg.Name != "platform-udf" || pkg.Version != SDKVersion || pkg.Private != nil || pkg.Main != "assembly/index.ts" ||
		pkg.AscMain != "assembly/index.ts" || pkg.License == "" || pkg.Description == "" ||
		!slices.Equal(pkg.Files, []string{"assembly/", "harness.mjs", "harness-script.mjs", "README.md"}) || pkg.Peer["assemblyscript"] == "" {
		t.Fatalf("sdk/assemblyscript/package.json is %+v", pkg)
	}
	if v, err := ascVersion(); err != nil || v != "0.28.20" {
		t.Fatalf("ascVersion() = %q, %v", v, err)
	}
}
