//go:build !wasip1

package udf

import (
	"log/slog"
	"testing"
)

func TestSlogLevel(t *testing.T) {
	tests := []struct {
		level Level
		want  slog.Level
	}{
		{-1, slog.LevelDebug},
		{LevelDebug, slog.LevelDebug},
		{LevelInfo, slog.LevelInfo},
		{LevelWarn, slog.LevelWarn},
		{LevelError, slog.LevelError},
		{9, slog.LevelError},
	}
	for _, tt := range tests {
		if got := slogLevel(tt.level); got != tt.want {
			t.Errorf("slogLevel(%d) = %v, want %v", tt.level, got, tt.want)
		}
	}
}
