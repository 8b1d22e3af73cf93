// Package platform carries the sources of the SDKs, and of the abi package
// the Go SDK is built on, so that `platform udf new` can write a copy of an
// SDK into a new project, which then builds without this repository.
package platform

import "embed"

// SDKs holds sdk/go (with its json package and tests), abi, sdk/rust,
// sdk/c and the AssemblyScript package in sdk/assemblyscript (without its
// node_modules), at their paths in the repository.
//
//go:embed abi/*.go sdk/go sdk/rust/Cargo.toml sdk/rust/README.md sdk/rust/src
//go:embed sdk/c/*.c sdk/c/*.h sdk/c/README.md
//go:embed sdk/assemblyscript/package.json sdk/assemblyscript/README.md sdk/assemblyscript/assembly
//go:embed sdk/assemblyscript/harness.mjs sdk/assemblyscript/harness-script.mjs
var SDKs embed.FS
