package udfdev

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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
		{"bad name", Project{Name: "Bad Name", Lang: "go", Dir: t.TempDir(), Platform: root}, `name "Bad Name": use lower-case letters`},
		{"bad language", Project{Name: "x", Lang: "cobol", Dir: t.TempDir(), Platform: root}, `language "cobol": want one of go, rust, c, assemblyscript`},
		{"directory not empty", Project{Name: "x", Lang: "c", Dir: full, Platform: root}, "is not empty"},
		{"not the platform", Project{Name: "x", Lang: "c", Dir: t.TempDir(), Platform: t.TempDir()}, "is not the platform repository"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := Scaffold(tt.p); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestFindPlatform(t *testing.T) {
	root, err := FindPlatform(filepath.Join(wasmbuild.Root(), "sdk", "go"))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := filepath.Abs(wasmbuild.Root())
	if root != want {
		t.Fatalf("root %s, want %s", root, want)
	}
	if _, err := FindPlatform(t.TempDir()); err == nil || !strings.Contains(err.Error(), "give its root with --platform") {
		t.Fatalf("error %v", err)
	}
}
