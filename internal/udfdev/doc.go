// Package udfdev is the developer loop for UDF modules, behind the
// `platform udf` commands: Scaffold creates a buildable UDF project in any SDK
// language (Go, Rust, C, AssemblyScript) with a Makefile and a test, and Run
// runs one function of a module over sample records locally, without a
// server, through the same host (package host) and frames (package abi) the
// platform uses.
package udfdev
