package udfdev_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"wasmstream.io/platform/internal/udfdev"
)

func ExampleReadRecords() {
	recs, err := udfdev.ReadRecords(strings.NewReader(`{"key": "ann", "value": {"clicks": 3}, "timestamp": 1700000000000}
{"value": "plain text", "headers": [{"name": "source", "value": "web"}]}
`))
	if err != nil {
		panic(err)
	}
	for _, r := range recs {
		fmt.Printf("%q %q %d %d header(s)\n", r.Key, r.Value, r.Timestamp, len(r.Headers))
	}
	// Output:
	// "ann" "{\"clicks\":3}" 1700000000000 0 header(s)
	// "" "plain text" 0 1 header(s)
}

func ExampleScaffold() {
	root, err := udfdev.FindPlatform(".")
	if err != nil {
		panic(err)
	}
	dir, err := os.MkdirTemp("", "scaffold-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	p := udfdev.Project{Name: "greet", Lang: "rust", Dir: filepath.Join(dir, "greet"), Platform: root}
	if err := udfdev.Scaffold(p); err != nil {
		panic(err)
	}
	err = filepath.WalkDir(p.Dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(p.Dir, path)
			fmt.Println(filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		panic(err)
	}
	// Output:
	// .cargo/config.toml
	// .gitignore
	// Cargo.toml
	// Makefile
	// README.md
	// lib.rs
	// testdata/input.jsonl
	// testdata/want.jsonl
}
