package host

import "fmt"

// Limits on what a module may declare. Compile refuses a module above
// either before it instruments or compiles anything, reading only the
// counts at the head of the export and function sections, so that the
// refusal takes the same few microseconds however large the module is.
// wazero compiles every function of a module, at a few microseconds each
// however small, and the instrumenter reads every export: without these
// limits only the upload size (64 MiB, room for some 16 million empty
// functions) would bound what one upload costs. The platform's own
// modules declare at most 7 exports and about 2,200 functions.
const (
	// MaxExports is the most exports (of any kind) a module may declare.
	MaxExports = 100_000
	// MaxFunctions is the most functions a module may define, its
	// imported functions not counted.
	MaxFunctions = 1_000_000
)

// moduleLimits are the limits a Host holds modules to: MaxExports and
// MaxFunctions, which tests lift to measure what they save.
type moduleLimits struct {
	exports, functions uint32
}

var defaultLimits = moduleLimits{exports: MaxExports, functions: MaxFunctions}

// check names each limit the module's declared counts exceed. A module it
// cannot split into sections, or whose counts it cannot read, passes: the
// instrumenter and wazero report what is wrong with it.
func (l moduleLimits) check(wasm []byte) []string {
	sections, err := splitSections(wasm)
	if err != nil {
		return nil
	}
	var problems []string
	for _, s := range sections {
		var what string
		var limit uint32
		switch s.id {
		case secExport:
			what, limit = "exports", l.exports
		case secFunction:
			what, limit = "functions", l.functions
		default:
			continue
		}
		r := &wasmReader{buf: s.content, base: s.start}
		if n, err := r.u32(); err == nil && n > limit {
			problems = append(problems, fmt.Sprintf("%d %s, more than the limit of %d per module", n, what, limit))
		}
	}
	return problems
}
