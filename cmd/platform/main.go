// Command platform is the stream platform's one binary: `platform serve` runs
// the embedded NATS server (or connects to one), the HTTP API and a worker;
// `platform demo` runs the word-count job end to end; `platform version`
// prints the build; `platform module` and `platform job` are a client of the
// HTTP API, and `platform stream`, `pub` and `sub` small helpers over NATS.
// This package only wires the others together.
package main

import (
	"fmt"
	"os"
)

func main() {
	if err := newRootCommand().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
