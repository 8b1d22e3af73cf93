package connector

import (
	"context"
	"fmt"
	"log/slog"
)

// serverLog adapts the NATS server's logger interface to slog and captures
// the first fatal message, which the server reports instead of returning an
// error (the server never exits the process through it).
type serverLog struct {
	log   *slog.Logger
	fatal chan string
}

func newServerLog(l *slog.Logger) *serverLog {
	if l == nil {
		l = slog.New(slog.DiscardHandler)
	}
	return &serverLog{log: l.With("component", "nats-server"), fatal: make(chan string, 1)}
}

func (s *serverLog) emit(level slog.Level, format string, v []any) {
	if s.log.Enabled(context.Background(), level) {
		s.log.Log(context.Background(), level, fmt.Sprintf(format, v...))
	}
}

func (s *serverLog) Noticef(format string, v ...any) { s.emit(slog.LevelInfo, format, v) }
func (s *serverLog) Warnf(format string, v ...any)   { s.emit(slog.LevelWarn, format, v) }
func (s *serverLog) Errorf(format string, v ...any)  { s.emit(slog.LevelError, format, v) }
func (s *serverLog) Debugf(format string, v ...any)  { s.emit(slog.LevelDebug, format, v) }
func (s *serverLog) Tracef(format string, v ...any)  { s.emit(slog.LevelDebug-4, format, v) }

func (s *serverLog) Fatalf(format string, v ...any) {
	msg := fmt.Sprintf(format, v...)
	s.log.Error(msg)
	select {
	case s.fatal <- msg:
	default:
	}
}
