package abi

import (
	"encoding/binary"
	"math"
)

// Grouped frames carry records gathered by key, window or timer to the
// grouped kinds (aggregate, reduce, window_process, session_gap, process,
// on_timer, join, co_group), so that one call serves every group of a batch:
//
//	u8 op | i64 watermark | i64 processing time | u32 group count | group*
//	group: u8 flags | u32 key length | key
//	       | window:      i64 start | i64 end            (flags & GroupWindow)
//	       | accumulator: u32 length | bytes             (flags & GroupAcc)
//	       | second acc.: u32 length | bytes             (flags & GroupAcc2)
//	       | timer:       i64 timestamp | u8 domain      (flags & GroupTimer)
//	       | u32 record count | record*                  (the left side)
//	       | u32 record count | record*                  (flags & GroupTwoSided: the right side)
//
// Records use the input frame's record layout. Output entries name a group by
// its index, except for process functions, whose entries name a record by its
// position among all the frame's records (see docs/ABI.md).

// Op says what an aggregate or reduce call does with its groups.
type Op uint8

// Grouped frame operations.
const (
	// OpNone is every kind's op but aggregate's and reduce's.
	OpNone Op = 0
	// OpAdd folds the group's records into its accumulator (absent: a new
	// one) and answers a TagAccumulator per group.
	OpAdd Op = 1
	// OpMerge merges the group's two accumulators into one TagAccumulator.
	OpMerge Op = 2
	// OpResult turns the group's accumulator into a TagRecord.
	OpResult Op = 3
)

// GroupFlags say which optional fields a group carries.
type GroupFlags uint8

// Group flags.
const (
	GroupWindow   GroupFlags = 1 << 0
	GroupAcc      GroupFlags = 1 << 1
	GroupAcc2     GroupFlags = 1 << 2
	GroupTimer    GroupFlags = 1 << 3
	GroupTwoSided GroupFlags = 1 << 4
)

// TimeDomain is a timer's clock.
type TimeDomain uint8

// Timer domains.
const (
	EventTime      TimeDomain = 0
	ProcessingTime TimeDomain = 1
)

// NoWatermark is the watermark before the first one: no event time yet.
const NoWatermark = math.MinInt64

// GroupHead is a group without its records.
type GroupHead struct {
	Flags       GroupFlags
	Key         []byte
	WindowStart int64
	WindowEnd   int64
	Acc         []byte
	Acc2        []byte
	TimerTime   int64
	TimerDomain TimeDomain
}

// FrameHead is a grouped frame's header.
type FrameHead struct {
	Op             Op
	Watermark      int64
	ProcessingTime int64
	Groups         uint32
}

// AppendFrameHead starts a grouped frame.
func AppendFrameHead(dst []byte, h FrameHead) []byte {
	dst = append(dst, byte(h.Op))
	dst = binary.LittleEndian.AppendUint64(dst, uint64(h.Watermark))
	dst = binary.LittleEndian.AppendUint64(dst, uint64(h.ProcessingTime))
	return binary.LittleEndian.AppendUint32(dst, h.Groups)
}

// SetGroupCount overwrites the group count of a grouped frame at frame[0].
func SetGroupCount(frame []byte, groups uint32) {
	binary.LittleEndian.PutUint32(frame[17:], groups)
}

// AppendGroupHead appends a group's fields and the count of its (left)
// records, which the caller appends next with AppendRecord. For a two-sided
// group, AppendSide then starts the right side.
func AppendGroupHead(dst []byte, g *GroupHead, records uint32) []byte {
	dst = append(dst, byte(g.Flags))
	dst = appendBytes(dst, g.Key)
	if g.Flags&GroupWindow != 0 {
		dst = binary.LittleEndian.AppendUint64(dst, uint64(g.WindowStart))
		dst = binary.LittleEndian.AppendUint64(dst, uint64(g.WindowEnd))
	}
	if g.Flags&GroupAcc != 0 {
		dst = appendBytes(dst, g.Acc)
	}
	if g.Flags&GroupAcc2 != 0 {
		dst = appendBytes(dst, g.Acc2)
	}
	if g.Flags&GroupTimer != 0 {
		dst = binary.LittleEndian.AppendUint64(dst, uint64(g.TimerTime))
		dst = append(dst, byte(g.TimerDomain))
	}
	return binary.LittleEndian.AppendUint32(dst, records)
}

// AppendSide starts the right side of a two-sided group: its record count.
func AppendSide(dst []byte, records uint32) []byte {
	return binary.LittleEndian.AppendUint32(dst, records)
}

// GroupReader decodes a grouped frame group by group and record by record.
// Records left unread in a group are skipped by the next NextGroup.
type GroupReader struct {
	r        reader
	head     FrameHead
	read     uint32
	group    GroupHead
	left     uint32 // records left on the current side
	right    bool   // the current group has a right side still to come
	onRight  bool
	inGroup  bool
	recCount uint32
}

// Reset starts decoding a grouped frame.
func (gr *GroupReader) Reset(frame []byte) error {
	*gr = GroupReader{r: reader{buf: frame}}
	gr.head.Op = Op(gr.r.u8())
	gr.head.Watermark = int64(gr.r.u64())
	gr.head.ProcessingTime = int64(gr.r.u64())
	gr.head.Groups = gr.r.u32()
	return gr.r.err
}

// Head is the frame's header.
func (gr *GroupReader) Head() FrameHead { return gr.head }

// NextGroup moves to the next group and decodes its head into g (slices
// alias the frame). It returns false at the end or on error.
func (gr *GroupReader) NextGroup(g *GroupHead) bool {
	if gr.inGroup && !gr.skipRest() {
		return false
	}
	if gr.read >= gr.head.Groups || gr.r.err != nil {
		return false
	}
	if gr.fastGroup(g) {
		return true
	}
	start := gr.r.off
	*g = GroupHead{Flags: GroupFlags(gr.r.u8())}
	if g.Flags&^(GroupWindow|GroupAcc|GroupAcc2|GroupTimer|GroupTwoSided) != 0 {
		gr.r.err = malformed(start, "unknown group flags %#x", uint8(g.Flags))
		return false
	}
	g.Key = gr.r.bytes()
	if g.Flags&GroupWindow != 0 {
		g.WindowStart = int64(gr.r.u64())
		g.WindowEnd = int64(gr.r.u64())
	}
	if g.Flags&GroupAcc != 0 {
		g.Acc = gr.r.bytes()
	}
	if g.Flags&GroupAcc2 != 0 {
		g.Acc2 = gr.r.bytes()
	}
	if g.Flags&GroupTimer != 0 {
		g.TimerTime = int64(gr.r.u64())
		g.TimerDomain = TimeDomain(gr.r.u8())
	}
	gr.left = gr.r.u32()
	if gr.r.err != nil {
		return false
	}
	gr.group = *g
	gr.right = g.Flags&GroupTwoSided != 0
	gr.onRight = false
	gr.inGroup = true
	gr.read++
	return true
}

// fastGroup decodes a well-formed group head in one flat function (see
// NextRecord); it reports false, consuming nothing, when the head needs the
// checked path.
func (gr *GroupReader) fastGroup(g *GroupHead) bool {
	buf, off := gr.r.buf, gr.r.off
	if len(buf)-off < 5 {
		return false
	}
	flags := GroupFlags(buf[off])
	if flags&^(GroupWindow|GroupAcc|GroupAcc2|GroupTimer|GroupTwoSided) != 0 {
		return false
	}
	n := int(binary.LittleEndian.Uint32(buf[off+1:]))
	off += 5
	if n > len(buf)-off {
		return false
	}
	*g = GroupHead{Flags: flags, Key: buf[off : off+n : off+n]}
	off += n
	if flags&GroupWindow != 0 {
		if len(buf)-off < 16 {
			return false
		}
		g.WindowStart = int64(binary.LittleEndian.Uint64(buf[off:]))
		g.WindowEnd = int64(binary.LittleEndian.Uint64(buf[off+8:]))
		off += 16
	}
	if flags&GroupAcc != 0 {
		if len(buf)-off < 4 {
			return false
		}
		n = int(binary.LittleEndian.Uint32(buf[off:]))
		off += 4
		if n > len(buf)-off {
			return false
		}
		g.Acc = buf[off : off+n : off+n]
		off += n
	}
	if flags&GroupAcc2 != 0 {
		if len(buf)-off < 4 {
			return false
		}
		n = int(binary.LittleEndian.Uint32(buf[off:]))
		off += 4
		if n > len(buf)-off {
			return false
		}
		g.Acc2 = buf[off : off+n : off+n]
		off += n
	}
	if flags&GroupTimer != 0 {
		if len(buf)-off < 9 {
			return false
		}
		g.TimerTime = int64(binary.LittleEndian.Uint64(buf[off:]))
		g.TimerDomain = TimeDomain(buf[off+8])
		off += 9
	}
	if len(buf)-off < 4 {
		return false
	}
	gr.left = binary.LittleEndian.Uint32(buf[off:])
	gr.r.off = off + 4
	gr.group = *g
	gr.right = flags&GroupTwoSided != 0
	gr.onRight = false
	gr.inGroup = true
	gr.read++
	return true
}

// NextRecord decodes the current side's next record into rec. It returns
// false when the side is exhausted (call NextSide for a two-sided group's
// right side) or on error.
//
// A record without headers is decoded in one flat function, as
// InputReader.Next does, for the Go SDK's sake.
func (gr *GroupReader) NextRecord(rec *Record) bool {
	if !gr.inGroup || gr.left == 0 || gr.r.err != nil {
		return false
	}
	buf, off := gr.r.buf, gr.r.off
	if len(buf)-off >= 4 {
		n := int(binary.LittleEndian.Uint32(buf[off:]))
		if n <= len(buf)-off-4 {
			key := buf[off+4 : off+4+n : off+4+n]
			o := off + 4 + n
			if len(buf)-o >= 4 {
				n = int(binary.LittleEndian.Uint32(buf[o:]))
				if n <= len(buf)-o-16 {
					value := buf[o+4 : o+4+n : o+4+n]
					o += 4 + n
					if binary.LittleEndian.Uint32(buf[o+8:]) == 0 {
						rec.Key, rec.Value, rec.Timestamp, rec.Headers = key, value, int64(binary.LittleEndian.Uint64(buf[o:])), rec.Headers[:0]
						gr.r.off = o + 12
						gr.left--
						gr.recCount++
						return true
					}
				}
			}
		}
	}
	rec.Key = gr.r.bytes()
	rec.Value = gr.r.bytes()
	rec.Timestamp = int64(gr.r.u64())
	rec.Headers = gr.r.headers(rec.Headers[:0])
	if gr.r.err != nil {
		return false
	}
	gr.left--
	gr.recCount++
	return true
}

// NextSide moves to the right side of a two-sided group, skipping what is
// left of the left side. It returns false if there is no right side.
func (gr *GroupReader) NextSide() bool {
	if !gr.inGroup || !gr.right || gr.r.err != nil {
		return false
	}
	var rec Record
	for gr.NextRecord(&rec) {
	}
	if gr.r.err != nil {
		return false
	}
	gr.left = gr.r.u32()
	gr.right = false
	gr.onRight = true
	return gr.r.err == nil
}

// OnRight reports whether NextRecord reads the right side.
func (gr *GroupReader) OnRight() bool { return gr.onRight }

// Records is how many records have been decoded so far, over all groups:
// the index a process function's output entries use.
func (gr *GroupReader) Records() uint32 { return gr.recCount }

// skipRest consumes the current group's unread records.
func (gr *GroupReader) skipRest() bool {
	var rec Record
	for gr.NextRecord(&rec) {
	}
	if gr.right && !gr.NextSide() {
		return gr.r.err == nil
	}
	for gr.NextRecord(&rec) {
	}
	gr.inGroup = false
	return gr.r.err == nil
}

// Err is the first decoding error, including trailing bytes after the last
// group once every group has been read.
func (gr *GroupReader) Err() error {
	if gr.r.err != nil {
		return gr.r.err
	}
	if gr.read == gr.head.Groups && (!gr.inGroup || gr.left == 0 && !gr.right) && gr.r.off != len(gr.r.buf) {
		return malformed(gr.r.off, "%d trailing bytes after %d groups", len(gr.r.buf)-gr.r.off, gr.head.Groups)
	}
	return nil
}
