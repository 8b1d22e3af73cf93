//go:build race

package connector

// raceEnabled: the race detector allocates on paths that allocate nothing
// without it, so exact allocation counts are checked only without it.
const raceEnabled = true
