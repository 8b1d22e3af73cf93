package udf

import (
	"bytes"
	"fmt"

	"wasmstream.io/platform/abi"
)

// Output is one entry of a function's output frame, resolved the way the host
// resolves it against the input records.
type Output struct {
	// Index is the position of the input record the entry answers.
	Index int
	// Record is the record the host passes on: for map and flat_map the
	// emitted record, with the fields it inherits from the input; for filter
	// the kept input; for key and timestamp the input with its new key or
	// timestamp. It is zero for an error. Empty byte slices are nil.
	Record Record
	// Err is the message of an error entry, reported when the function
	// returned an error or panicked for the input.
	Err string
	// Side is the side output the record was emitted on (ctx.Output,
	// SideOutput); empty for the main output.
	Side string
}

// Invoke runs the registered function name over the records in as one
// batch, through the same frame encoding and dispatch as a call into the
// WebAssembly module, and returns the resolved output entries in order. It
// is meant for unit tests of UDFs; it copies in and its results, so it is not
// allocation-free.
func Invoke(name string, in []Record) ([]Output, error) {
	fn := functions.lookup(name)
	if fn < 0 {
		return nil, fmt.Errorf("udf: no function %q is registered", name)
	}
	return resolve(newCaller(&functions).call(uint32(fn), abi.AppendFrame(nil, in)), in)
}

// resolve decodes an output frame answering the records in.
func resolve(frame []byte, in []Record) ([]Output, error) {
	var r abi.OutputReader
	if err := r.Reset(frame, uint32(len(in))); err != nil {
		return nil, err
	}
	var outs []Output
	var e abi.Entry
	for r.Next(&e) {
		if e.Index == abi.AllRecords {
			return nil, fmt.Errorf("udf: the whole batch failed: %s", e.Message)
		}
		outs = append(outs, resolveEntry(&e, &in[e.Index]))
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	return outs, nil
}

func resolveEntry(e *abi.Entry, in *Record) Output {
	o := Output{Index: int(e.Index)}
	if e.Tag == abi.TagError {
		o.Err = string(e.Message)
		return o
	}
	applied := e.Apply(in)
	o.Record = clone(&applied)
	o.Side = string(e.Output)
	return o
}

func clone(r *Record) Record {
	return Record{Key: cloneBytes(r.Key), Value: cloneBytes(r.Value), Timestamp: r.Timestamp, Headers: cloneHeaders(r.Headers)}
}

func cloneBytes(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return bytes.Clone(b)
}

func cloneHeaders(hs []Header) []Header {
	if len(hs) == 0 {
		return nil
	}
	out := make([]Header, len(hs))
	for i, h := range hs {
		out[i] = Header{Name: cloneBytes(h.Name), Value: cloneBytes(h.Value)}
	}
	return out
}
