// Package udfs holds the example and benchmark UDF modules, one buildable
// project per directory, each with a Makefile whose default target builds
// <name>/<name>.wasm and a README saying what its functions do; the
// Makefiles of modules built with an SDK include the rules of their language,
// go.mk, rust.mk, c.mk or as.mk, which live here. The package
// itself has only tests: they build every module with its Makefile, run it
// under wazero through the raw ABI, and benchmark the upper modules.
package udfs
