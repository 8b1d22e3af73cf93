//go:build race

package host

// raceEnabled: the race detector keeps shadow memory for the heap the
// tests touch, which no trim returns to the OS.
const raceEnabled = true
