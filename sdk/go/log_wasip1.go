//go:build wasip1

package udf

// Log writes msg into the platform's logs at level, tagged with the module
// and function that wrote it. Standard output and standard error reach the
// same logs; Log keeps the level.
func Log(level Level, msg string) {
	hostLog(int32(level), msg)
}

// hostLog is the platform's log import: (level i32, ptr i32, len i32).
//
//go:wasmimport platform log
func hostLog(level int32, msg string)
