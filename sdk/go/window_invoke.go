package udf

import (
	"fmt"

	"wasmstream.io/platform/abi"
)

// InvokeAggregate runs the registered aggregate or reduce function name over
// one window the way the platform does, through the same frames as a call
// into the WebAssembly module: each part of the window's records is added
// into its own accumulator (one add call for all parts), the accumulators
// are merged pairwise (as sliding windows and merging sessions do), and the
// result is taken. It returns the window's result records, resolved with
// what they inherit (the key, and the timestamp w.End - 1); a group error
// comes back as an Output with Err set.
func InvokeAggregate(name string, key []byte, w Window, parts ...[]Record) ([]Output, error) {
	fn := functions.lookup(name)
	if fn < 0 {
		return nil, fmt.Errorf("udf: no function %q is registered", name)
	}
	kind := functions.funcs[fn].kind
	if kind != abi.KindAggregate && kind != abi.KindReduce {
		return nil, fmt.Errorf("udf: %q is a %s function, not aggregate or reduce", name, kind)
	}
	c := newCaller(&functions)
	call := func(frame []byte, groups int) ([][]byte, []Output, error) {
		var r abi.OutputReader
		if err := r.Reset(c.call(uint32(fn), frame), uint32(groups)); err != nil {
			return nil, nil, err
		}
		var accs [][]byte
		var outs []Output
		var e abi.Entry
		for r.Next(&e) {
			switch {
			case e.Index == abi.AllRecords:
				return nil, nil, fmt.Errorf("udf: the whole frame failed: %s", e.Message)
			case e.Tag == abi.TagError:
				outs = append(outs, Output{Index: int(e.Index), Err: string(e.Message)})
			case e.Tag == abi.TagAccumulator:
				accs = append(accs, cloneBytes(e.Value))
			case e.Tag == abi.TagRecord:
				in := Record{Key: key, Timestamp: w.End - 1}
				outs = append(outs, resolveEntry(&e, &in))
			default:
				return nil, nil, fmt.Errorf("udf: unexpected entry tag %d", e.Tag)
			}
		}
		return accs, outs, r.Err()
	}
	frame := abi.AppendFrameHead(nil, abi.FrameHead{Op: abi.OpAdd, Watermark: abi.NoWatermark, Groups: uint32(len(parts))})
	for _, part := range parts {
		frame = abi.AppendGroupHead(frame, &abi.GroupHead{Key: key}, uint32(len(part)))
		for i := range part {
			frame = abi.AppendRecord(frame, &part[i])
		}
	}
	accs, outs, err := call(frame, len(parts))
	if err != nil || len(outs) > 0 {
		return outs, err
	}
	for len(accs) > 1 {
		frame = abi.AppendFrameHead(nil, abi.FrameHead{Op: abi.OpMerge, Watermark: abi.NoWatermark, Groups: uint32(len(accs) / 2)})
		for i := 0; i+1 < len(accs); i += 2 {
			frame = abi.AppendGroupHead(frame, &abi.GroupHead{Flags: abi.GroupAcc | abi.GroupAcc2, Key: key, Acc: accs[i], Acc2: accs[i+1]}, 0)
		}
		merged, outs, err := call(frame, len(accs)/2)
		if err != nil || len(outs) > 0 {
			return outs, err
		}
		if len(accs)%2 == 1 {
			merged = append(merged, accs[len(accs)-1])
		}
		accs = merged
	}
	if len(accs) == 0 {
		return nil, nil
	}
	if kind == abi.KindReduce {
		return []Output{{Record: Record{Key: cloneBytes(key), Value: accs[0], Timestamp: w.End - 1}}}, nil
	}
	frame = abi.AppendFrameHead(nil, abi.FrameHead{Op: abi.OpResult, Watermark: abi.NoWatermark, Groups: 1})
	frame = abi.AppendGroupHead(frame, &abi.GroupHead{Flags: abi.GroupWindow | abi.GroupAcc, Key: key, WindowStart: w.Start, WindowEnd: w.End, Acc: accs[0]}, 0)
	_, outs, err = call(frame, 1)
	return outs, err
}

// InvokeProcessWindow runs the registered window process function name over
// one window's records, through the same frame as a call into the module,
// and returns its results resolved with what they inherit.
func InvokeProcessWindow(name string, key []byte, w Window, recs []Record) ([]Output, error) {
	fn, err := lookupKind(name, abi.KindWindowProcess)
	if err != nil {
		return nil, err
	}
	frame := abi.AppendFrameHead(nil, abi.FrameHead{Watermark: abi.NoWatermark, Groups: 1})
	frame = abi.AppendGroupHead(frame, &abi.GroupHead{Flags: abi.GroupWindow, Key: key, WindowStart: w.Start, WindowEnd: w.End}, uint32(len(recs)))
	for i := range recs {
		frame = abi.AppendRecord(frame, &recs[i])
	}
	in := []Record{{Key: key, Timestamp: w.End - 1}}
	return resolve(newCaller(&functions).call(fn, frame), in)
}

// InvokeSessionGap runs the registered session gap function name over
// records (grouped by key as the platform groups them) and returns each
// record's gap; Output.Record.Timestamp holds the gap, or Err the error.
func InvokeSessionGap(name string, recs []Record) ([]Output, error) {
	fn, err := lookupKind(name, abi.KindSessionGap)
	if err != nil {
		return nil, err
	}
	frame := abi.AppendFrameHead(nil, abi.FrameHead{Watermark: abi.NoWatermark})
	groups := 0
	for lo := 0; lo < len(recs); {
		hi := lo + 1
		for hi < len(recs) && string(recs[hi].Key) == string(recs[lo].Key) {
			hi++
		}
		frame = abi.AppendGroupHead(frame, &abi.GroupHead{Key: recs[lo].Key}, uint32(hi-lo))
		for i := lo; i < hi; i++ {
			frame = abi.AppendRecord(frame, &recs[i])
		}
		groups++
		lo = hi
	}
	abi.SetGroupCount(frame, uint32(groups))
	return resolve(newCaller(&functions).call(fn, frame), recs)
}

// InvokeWatermark runs the registered watermark function name over records
// as one batch; each Output names the record a watermark follows, with the
// watermark in Record.Timestamp (or the record's error in Err).
func InvokeWatermark(name string, recs []Record) ([]Output, error) {
	fn, err := lookupKind(name, abi.KindWatermark)
	if err != nil {
		return nil, err
	}
	var r abi.OutputReader
	if err := r.Reset(newCaller(&functions).call(fn, abi.AppendFrame(nil, recs)), uint32(len(recs))); err != nil {
		return nil, err
	}
	var outs []Output
	var e abi.Entry
	for r.Next(&e) {
		switch {
		case e.Index == abi.AllRecords:
			return nil, fmt.Errorf("udf: the whole batch failed: %s", e.Message)
		case e.Tag == abi.TagError:
			outs = append(outs, Output{Index: int(e.Index), Err: string(e.Message)})
		default:
			outs = append(outs, Output{Index: int(e.Index), Record: Record{Timestamp: e.Timestamp}})
		}
	}
	return outs, r.Err()
}

func lookupKind(name string, kind abi.Kind) (uint32, error) {
	fn := functions.lookup(name)
	if fn < 0 {
		return 0, fmt.Errorf("udf: no function %q is registered", name)
	}
	if got := functions.funcs[fn].kind; got != kind {
		return 0, fmt.Errorf("udf: %q is a %s function, not %s", name, got, kind)
	}
	return uint32(fn), nil
}
