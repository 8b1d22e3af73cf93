// Package record holds the record-at-a-time operators: Wasm record
// functions (map, filter, flat_map, key, timestamp) called over batches, the
// host-native key_by.field and timestamp.field extraction from JSON, the
// extract operator (a JSON member as the record's value), and the
// punctuator that runs a source's watermark function for punctuated
// watermarks. A call that fails as a whole is narrowed down to its poison
// records (operator.ErrorPolicy.Isolate), so that the others are neither
// lost nor duplicated.
package record
