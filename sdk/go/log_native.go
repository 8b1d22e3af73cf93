//go:build !wasip1

package udf

import (
	"context"
	"log/slog"
)

// Log writes msg into the platform's logs at level. Outside WebAssembly, as
// in unit tests, it writes to slog's default logger.
func Log(level Level, msg string) {
	slog.Log(context.Background(), slogLevel(level), msg)
}

func slogLevel(level Level) slog.Level {
	switch {
	case level <= LevelDebug:
		return slog.LevelDebug
	case level == LevelInfo:
		return slog.LevelInfo
	case level == LevelWarn:
		return slog.LevelWarn
	}
	return slog.LevelError
}
