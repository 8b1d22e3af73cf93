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
	dir, err := os.MkdirTemp("", "scaffold-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	p := udfdev.Project{Name: "greet", Lang: "c", Dir: filepath.Join(dir, "greet")}
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
	// .gitignore
	// Makefile
	// README.md
	// greet.c
	// job.yaml
	// testdata/input.jsonl
	// testdata/want.jsonl
	// third_party/platform-sdk-c/README.md
	// third_party/platform-sdk-c/platform_harness.c
	// third_party/platform-sdk-c/platform_harness.h
	// third_party/platform-sdk-c/platform_harness_script.c
	// third_party/platform-sdk-c/platform_json.c
	// third_party/platform-sdk-c/platform_json.h
	// third_party/platform-sdk-c/platform_udf.c
	// third_party/platform-sdk-c/platform_udf.h
}
