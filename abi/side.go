package abi

import "encoding/binary"

// TagOutput emits a record on a named side output (Flink's
// ctx.output(tag, value)): the entry's body is the output's name, then a
// record entry's body (flags, key, value, timestamp, headers). Fields the
// entry does not carry are inherited as for a TagRecord entry of the same
// kind, so a side output's record carries the event time of the input that
// caused it. Only the grouped kinds that may emit records write it
// (process, on_timer, window_process, join, co_group); a module that never
// writes it is unaffected by its existence.
const TagOutput Tag = 8

// MaxOutputName bounds the name of a side output in an entry, as the job
// spec bounds the names it declares.
const MaxOutputName = 64

// AppendEntryOutput appends a TagOutput entry for input index on the side
// output named output. Only the fields named by flags are written.
func AppendEntryOutput(dst []byte, index uint32, output string, flags RecordFlags, r *Record) []byte {
	dst = append(dst, byte(TagOutput))
	dst = binary.LittleEndian.AppendUint32(dst, index)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(output)))
	dst = append(dst, output...)
	return appendRecordBody(dst, flags, r)
}
