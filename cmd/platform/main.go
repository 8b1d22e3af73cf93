// Command platform is the stream platform's one binary: `platform serve` runs
// the embedded NATS server (or connects to one), the HTTP API and a worker;
// `platform demo` runs the word-count job end to end; `platform version`
// prints the build. This package only wires the others together.
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
