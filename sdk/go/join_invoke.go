package udf

import (
	"wasmstream.io/platform/abi"
)

// InvokeJoin runs the registered join function name over one key and window
// the way the platform does, through the same frame as a call into the
// WebAssembly module, and returns the records it emitted, resolved with what
// they inherit (the key, and the timestamp w.End - 1).
func InvokeJoin(name string, key []byte, w Window, left, right []Record) ([]Output, error) {
	return invokeTwoSided(name, abi.KindJoin, key, w, left, right)
}

// InvokeCoGroup runs the registered co_group function name over one key and
// window as InvokeJoin does; either side may be empty.
func InvokeCoGroup(name string, key []byte, w Window, left, right []Record) ([]Output, error) {
	return invokeTwoSided(name, abi.KindCoGroup, key, w, left, right)
}

// InvokeIntervalJoin runs the registered join function name over one left
// record and the right records an interval join matched with it, as the
// platform does, and returns the records it emitted, resolved with what
// they inherit (the key, and the latest timestamp of the group, unless the
// function set one).
func InvokeIntervalJoin(name string, key []byte, left Record, right []Record) ([]Output, error) {
	fn, err := lookupKind(name, abi.KindJoin)
	if err != nil {
		return nil, err
	}
	ts := left.Timestamp
	for _, r := range right {
		ts = max(ts, r.Timestamp)
	}
	head := abi.GroupHead{Flags: abi.GroupTwoSided, Key: key}
	frame := twoSidedFrame(&head, []Record{left}, right)
	return resolve(newCaller(&functions).call(fn, frame), []Record{{Key: key, Timestamp: ts}})
}

func invokeTwoSided(name string, kind abi.Kind, key []byte, w Window, left, right []Record) ([]Output, error) {
	fn, err := lookupKind(name, kind)
	if err != nil {
		return nil, err
	}
	head := abi.GroupHead{Flags: abi.GroupWindow | abi.GroupTwoSided, Key: key, WindowStart: w.Start, WindowEnd: w.End}
	in := []Record{{Key: key, Timestamp: w.End - 1}}
	return resolve(newCaller(&functions).call(fn, twoSidedFrame(&head, left, right)), in)
}

// twoSidedFrame is a grouped frame of one two-sided group.
func twoSidedFrame(head *abi.GroupHead, left, right []Record) []byte {
	frame := abi.AppendFrameHead(nil, abi.FrameHead{Watermark: abi.NoWatermark, Groups: 1})
	frame = abi.AppendGroupHead(frame, head, uint32(len(left)))
	for i := range left {
		frame = abi.AppendRecord(frame, &left[i])
	}
	frame = abi.AppendSide(frame, uint32(len(right)))
	for i := range right {
		frame = abi.AppendRecord(frame, &right[i])
	}
	return frame
}
