// Package udfdev is the developer loop for UDF modules, behind the
// `platform udf` commands: Scaffold creates a buildable UDF project in any SDK
// language (Go, Rust, C, AssemblyScript) with a Makefile and a test, and Run
// runs one function of a module over sample records locally, without a
// server, in the operator the platform runs it in (packages
// runtime/operator/record, process and window, and the watermark
// generator), with real keyed state (package state) and a fixed processing
// time. What is left here is the command's own part: reading the records,
// choosing the operator, feeding it, and printing what comes out.
package udfdev
