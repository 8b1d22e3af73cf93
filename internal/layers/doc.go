// Package layers holds no code: its test checks every package of the module
// against the import rule of docs/ARCHITECTURE.md, whose layer table it
// parses, so that the documented layout and the imports cannot drift apart.
package layers
