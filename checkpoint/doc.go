// Package checkpoint owns the checkpoint coordinator and storage: triggering
// barriers, collecting acknowledgements, savepoints and recovery metadata.
// Barrier alignment itself lives beside the exchange inputs in runtime.
package checkpoint
