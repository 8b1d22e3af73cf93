// Package state holds keyed and operator state, key groups, TTL, backends and snapshots.
package state
