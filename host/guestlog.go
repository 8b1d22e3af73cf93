package host

import (
	"bytes"
	"context"
	"log/slog"

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
	msg := whole[:min(n, maxLine)]
	var extra []slog.Attr
	if n > maxLine {
		extra = append(extra, slog.Uint64("truncated_bytes", uint64(n-maxLine)))
	}
	logger.LogAttrs(ctx, level, string(msg), inst.logAttrs(extra...)...)
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
	w.inst.code.mod.host.log.LogAttrs(context.Background(), w.level, string(w.buf),
		w.inst.logAttrs(slog.String("stream", w.stream))...)
	w.buf = w.buf[:0]
}
