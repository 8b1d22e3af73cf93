package udf

import "wasmstream.io/platform/abi"

// Level is the level of a log line.
type Level = abi.LogLevel

// Log levels.
const (
	LevelDebug = abi.LogDebug
	LevelInfo  = abi.LogInfo
	LevelWarn  = abi.LogWarn
	LevelError = abi.LogError
)
