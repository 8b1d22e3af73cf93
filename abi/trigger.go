package abi

import "encoding/binary"

// A custom window trigger (Flink's Trigger) is a function of kind trigger.
// The window operator calls it over grouped frames, one group per window of
// a key (GroupWindow, with the window's trigger state in GroupAcc when it
// has one); the frame's op says which of the trigger's methods runs:
//
//   - OpTriggerElement (onElement): each group has one record, just added
//     to its window. A frame holds at most one group per window, so that
//     the guest sees a window's records one call after another.
//   - OpTriggerTimer (onEventTime, onProcessingTime): one group whose
//     GroupTimer says the timer's time and domain; no records.
//   - OpTriggerMerge (onMerge): one group, the merged window (a session),
//     with the state merged so far in GroupAcc and a merged-in window's
//     state in GroupAcc2 (each absent when it has none); no records.
//   - OpTriggerClear (clear): one group, a window being dropped; no
//     records.
//
// Entries name groups. A TagTrigger entry answers an element or a timer
// (absent: CONTINUE); TagTimer entries register or delete timers of the
// group's key and window; a TagAccumulator entry replaces the window's
// trigger state (empty: no state). docs/ABI.md, Custom triggers, is the
// spec.
const KindTrigger Kind = "trigger"

// Ops of a trigger's grouped frames.
const (
	OpTriggerElement Op = 4
	OpTriggerTimer   Op = 5
	OpTriggerMerge   Op = 6
	OpTriggerClear   Op = 7
)

// Entry tags of a trigger's answers.
const (
	// TagTrigger carries a TriggerResult in the entry's Result.
	TagTrigger Tag = 9
	// TagTimer registers (or, with Delete, deletes) a timer at Timestamp
	// in Domain for the group's key and window.
	TagTimer Tag = 10
)

// TriggerResult is what a trigger answers an element or a timer with:
// FIRE emits the window, PURGE drops its contents (after a FIRE).
type TriggerResult uint8

// Trigger results, Flink's TriggerResult.
const (
	TriggerContinue     TriggerResult = 0
	TriggerFire         TriggerResult = 1
	TriggerPurge        TriggerResult = 2
	TriggerFireAndPurge TriggerResult = TriggerFire | TriggerPurge
)

// Fires reports whether the window fires.
func (r TriggerResult) Fires() bool { return r&TriggerFire != 0 }

// Purges reports whether the window's contents are dropped.
func (r TriggerResult) Purges() bool { return r&TriggerPurge != 0 }

// MaxTriggerState bounds a window's trigger state: a trigger keeps a few
// counters or times, not records.
const MaxTriggerState = 4096

// timerDelete is the bit of a TagTimer entry's action byte that deletes.
const timerDelete = 1

// AppendEntryTrigger appends a TagTrigger entry answering group index.
func AppendEntryTrigger(dst []byte, index uint32, r TriggerResult) []byte {
	dst = append(dst, byte(TagTrigger))
	dst = binary.LittleEndian.AppendUint32(dst, index)
	return append(dst, byte(r))
}

// AppendEntryTimer appends a TagTimer entry for group index: a timer at ts
// in domain d, registered, or deleted when del is set.
func AppendEntryTimer(dst []byte, index uint32, del bool, d TimeDomain, ts int64) []byte {
	dst = append(dst, byte(TagTimer))
	dst = binary.LittleEndian.AppendUint32(dst, index)
	action := byte(0)
	if del {
		action = timerDelete
	}
	dst = append(dst, action, byte(d))
	return binary.LittleEndian.AppendUint64(dst, uint64(ts))
}

// triggerBody decodes the body of a TagTrigger entry.
func (or *OutputReader) triggerBody(e *Entry) {
	at := or.r.off
	e.Result = TriggerResult(or.r.u8())
	if or.r.err == nil && e.Result > TriggerFireAndPurge {
		or.r.err = malformed(at, "unknown trigger result %d", uint8(e.Result))
	}
}

// timerBody decodes the body of a TagTimer entry.
func (or *OutputReader) timerBody(e *Entry) {
	at := or.r.off
	action, domain := or.r.u8(), or.r.u8()
	e.Timestamp = int64(or.r.u64())
	switch {
	case or.r.err != nil:
	case action&^timerDelete != 0:
		or.r.err = malformed(at, "unknown timer action %d", action)
	case domain > uint8(ProcessingTime):
		or.r.err = malformed(at+1, "unknown time domain %d", domain)
	default:
		e.Delete, e.Domain = action == timerDelete, TimeDomain(domain)
	}
}
