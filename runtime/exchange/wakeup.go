package exchange

import "errors"

// ErrWoken is returned by Gate.Next when Wakeup interrupted its wait.
var ErrWoken = errors.New("exchange: gate woken")

// Wakeup makes Next return ErrWoken instead of waiting for a buffer: at once
// if Next is waiting, else the next time it finds no buffer ready. Buffers
// ready are served first. Tasks use it to run timed work (processing-time
// timers, periodic watermarks) while their input is quiet. Any goroutine may
// call it; it does not allocate.
func (g *Gate) Wakeup() {
	g.mu.Lock()
	g.woken = true
	g.wakeNext()
	g.mu.Unlock()
}
