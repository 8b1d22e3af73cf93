package host

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/tetratelabs/wazero/api"

	"wasmstream.io/platform/abi"
)

// maxLine bounds a guest log message and a line of guest output; longer
// output lines are split, longer log messages cut.
const maxLine = 4096

// guestLog implements platform.log(level, ptr, len): the message at
// [ptr, ptr+len) of the caller's memory goes to slog. A location outside
// memory traps the call, whatever the log level, as the state imports do.
func guestLog(ctx context.Context, mod api.Module, stack []uint64) {
	inst, ok := ctx.Value(instanceKey{}).(*instance)
	if !ok {
		return
	}
	ptr, n := api.DecodeU32(stack[1]), api.DecodeU32(stack[2])
	whole := guest(mod, abi.ImportLog, ptr, n)
	level := slogLevel(abi.LogLevel(api.DecodeI32(stack[0])))
	logger := inst.code.mod.host.log
	if !logger.Enabled(ctx, level) {
		return
	}
	if !inst.allowLine(ctx) {
		return
	}
	msg := whole[:min(n, maxLine)]
	var extra []slog.Attr
	if n > maxLine {
		extra = append(extra, slog.Uint64("truncated_bytes", uint64(n-maxLine)))
	}
	logger.LogAttrs(ctx, level, string(msg), inst.logAttrs(extra...)...)
}

// DefaultLogLinesPerSecond is how many log lines (platform.log, stdout and
// stderr together) a Guest may write in a second when InstanceConfig leaves
// LogLinesPerSecond zero.
const DefaultLogLinesPerSecond = 100

// logLimiter bounds the log lines of one Guest to a number per second of
// the host's clock. The lines past it are dropped and counted; the next
// line allowed, or the Guest's Close, first logs how many were.
type logLimiter struct {
	perSecond int
	// now is the clock, time.Now unless a test sets it.
	now     func() time.Time
	mu      sync.Mutex
	second  int64 // the second (host clock, Unix) lines are counted in
	lines   int
	dropped int64
}

// allow reports whether a line may be logged now, logging first the
// summary of the lines dropped before it.
func (l *logLimiter) allow(ctx context.Context, logger *slog.Logger, attrs func() []slog.Attr) bool {
	now := time.Now
	if l.now != nil {
		now = l.now
	}
	l.mu.Lock()
	sec := now().Unix()
	if sec != l.second {
		l.second, l.lines = sec, 0
	}
	if l.lines >= l.perSecond {
		l.dropped++
		l.mu.Unlock()
		return false
	}
	l.lines++
	dropped := l.dropped
	l.dropped = 0
	l.mu.Unlock()
	if dropped > 0 {
		logDropped(ctx, logger, dropped, l.perSecond, attrs())
	}
	return true
}

// flush logs the summary of the lines dropped since the last one allowed.
func (l *logLimiter) flush(ctx context.Context, logger *slog.Logger, attrs []slog.Attr) {
	l.mu.Lock()
	dropped := l.dropped
	l.dropped = 0
	l.mu.Unlock()
	if dropped > 0 {
		logDropped(ctx, logger, dropped, l.perSecond, attrs)
	}
}

func logDropped(ctx context.Context, logger *slog.Logger, dropped int64, perSecond int, attrs []slog.Attr) {
	attrs = append(attrs, slog.Int64("dropped", dropped), slog.Int("lines_per_second", perSecond))
	logger.LogAttrs(ctx, slog.LevelWarn, fmt.Sprintf("%d lines dropped", dropped), attrs...)
}

// allowLine applies the owning Guest's log rate limit to a line of the
// current call.
func (i *instance) allowLine(ctx context.Context) bool {
	if i.limiter == nil {
		return true
	}
	return i.limiter.allow(ctx, i.code.mod.host.log, func() []slog.Attr { return i.logAttrs() })
}

// slogLevel maps an ABI log level to slog's; levels outside the ABI's range
// clamp to the nearest.
func slogLevel(l abi.LogLevel) slog.Level {
	switch {
	case l <= abi.LogDebug:
		return slog.LevelDebug
	case l == abi.LogInfo:
		return slog.LevelInfo
	case l == abi.LogWarn:
		return slog.LevelWarn
	}
	return slog.LevelError
}

// lineWriter sends a guest's stdout or stderr to slog line by line; a line
// longer than maxLine goes out in pieces of maxLine bytes.
type lineWriter struct {
	inst   *instance
	stream string
	level  slog.Level
	buf    []byte
}

func (w *lineWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		line := p
		if i >= 0 {
			line = p[:i]
		}
		for len(w.buf)+len(line) >= maxLine {
			take := maxLine - len(w.buf)
			w.buf = append(w.buf, line[:take]...)
			line = line[take:]
			w.flush()
		}
		w.buf = append(w.buf, line...)
		if i < 0 {
			break
		}
		w.flush()
		p = p[i+1:]
	}
	return n, nil
}

// flush logs the buffered line, if any.
func (w *lineWriter) flush() {
	if len(w.buf) == 0 {
		return
	}
	if w.inst.allowLine(context.Background()) {
		w.inst.code.mod.host.log.LogAttrs(context.Background(), w.level, string(w.buf),
			w.inst.logAttrs(slog.String("stream", w.stream))...)
	}
	w.buf = w.buf[:0]
}
