package connector

import (
	"strconv"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/abi"
)

// HeaderID is the header carrying a record's id, <prefix>.<epoch>.<index>,
// in the messages of a fenced sink that commits message by message (on a
// stream of one replica), instead of Nats-Msg-Id: there the fence keeps a
// commit from storing a record twice (Recover advances the fence and reads
// back what earlier commits stored), and JetStream's de-duplication of
// every id would only cost the server (docs/RATIONALE.md, "A fenced sink
// on one replica carries no Nats-Msg-Id").
const HeaderID = "Platform-Id"

// Headers of a message in a JetStream atomic batch.
const (
	hdrBatchID     = "Nats-Batch-Id"
	hdrBatchSeq    = "Nats-Batch-Sequence"
	hdrBatchCommit = "Nats-Batch-Commit"
)

// The values of the headers a sink sets, in recordHeaders.vals.
const (
	valKey = iota
	valID
	valTimestamp
	// The headers of a message in an atomic batch (recordHeaders.batch),
	// the fence's also of every message expecting it (recordHeaders.expect).
	valBatchID
	valBatchSeq
	valBatchCommit
	valFenceSeq
	valFenceSubject
	numVals
)

// recordHeaders builds the header of the message of a record, reusing its
// maps and values. plain is the header of a record without headers of its
// own: its values alias vals, so that from one such record to the next only
// vals change and the map is not touched. own is the header rebuilt for a
// record with headers. ids: messages carry Nats-Msg-Id; batch: they carry
// the headers of an atomic batch, whose values the batch publisher sets in
// vals (the commit and fence headers present or not, per message); expect:
// every message expects the fence in vals (expectFence), and carries its
// id as idName, HeaderID rather than Nats-Msg-Id.
type recordHeaders struct {
	plain  nats.Header
	own    nats.Header
	vals   [numVals]string
	ts     [20]byte
	ids    bool
	batch  bool
	expect bool
	idName string
	// subject, when set (route), is where header writes the subject of
	// each record's message: subjectPrefix and the record's key.
	subject       *string
	subjectPrefix string
	subjectBuf    []byte
}

// route makes header set *subject, the subject of the message it builds
// the header of, to prefix and the record's key: the publishers of a sink
// whose subject is per record (a KV sink, "$KV.<bucket>." and the key) pass
// their message's Subject. It aliases a buffer header rewrites for the
// next record, as the header values do.
func (h *recordHeaders) route(subject *string, prefix string) {
	h.subject, h.subjectPrefix = subject, prefix
}

// init makes the headers in place: the plain header's values are slices of
// vals, so h must not be copied after.
func (h *recordHeaders) init(ids, batch bool) {
	h.plain, h.own, h.ids, h.batch, h.idName = make(nats.Header, numVals), nats.Header{}, ids, batch, nats.MsgIdHdr
	h.setOwn(h.plain)
}

// expectFence makes every message expect fence f as the last message on
// its subject and carry its id as HeaderID, after init.
func (h *recordHeaders) expectFence(f *Fence) {
	h.fenceAt(f.Seq)
	h.vals[valFenceSubject] = f.Subject
	h.expect = true
	delete(h.plain, h.idName)
	h.idName = HeaderID
	h.setOwn(h.plain)
}

// fenceAt makes the messages that expect the fence expect sequence seq.
func (h *recordHeaders) fenceAt(seq uint64) { h.vals[valFenceSeq] = strconv.FormatUint(seq, 10) }

// setOwn sets the headers the sink adds in hd, replacing those of the same
// names, as slices of vals.
func (h *recordHeaders) setOwn(hd nats.Header) {
	hd[HeaderKey] = h.slot(valKey, true)
	hd[HeaderTimestamp] = h.slot(valTimestamp, true)
	if h.ids {
		hd[h.idName] = h.slot(valID, true)
	}
	if h.batch {
		hd[hdrBatchID] = h.slot(valBatchID, true)
		hd[hdrBatchSeq] = h.slot(valBatchSeq, true)
		hd[hdrBatchCommit] = h.slot(valBatchCommit, false)
		hd[jetstream.ExpectedLastSubjSeqHeader] = h.slot(valFenceSeq, false)
		hd[jetstream.ExpectedLastSubjSeqSubjHeader] = h.slot(valFenceSubject, false)
	}
	if h.expect {
		hd[jetstream.ExpectedLastSubjSeqHeader] = h.slot(valFenceSeq, true)
		hd[jetstream.ExpectedLastSubjSeqSubjHeader] = h.slot(valFenceSubject, true)
	}
}

// slot is value i as a header's values: one value, or none (the header is
// then not sent).
func (h *recordHeaders) slot(i int, present bool) []string {
	if present {
		return h.vals[i : i+1 : i+1]
	}
	return h.vals[i:i:i]
}

// header returns the header of the message of record r with id. r must have
// passed validRecord; the values alias r's key and id until reset.
func (h *recordHeaders) header(r *abi.Record, id []byte) nats.Header {
	hd := h.plain
	if len(r.Headers) > 0 {
		hd = h.own
		clear(hd)
		for _, rh := range r.Headers {
			name := string(rh.Name)
			hd[name] = append(hd[name], string(rh.Value))
		}
		h.setOwn(hd)
	}
	h.vals[valKey] = aliasString(r.Key)
	h.vals[valID] = aliasString(id)
	h.vals[valTimestamp] = aliasString(strconv.AppendInt(h.ts[:0], r.Timestamp, 10))
	if h.subject != nil {
		h.subjectBuf = append(append(h.subjectBuf[:0], h.subjectPrefix...), r.Key...)
		*h.subject = aliasString(h.subjectBuf)
	}
	return hd
}

// reset drops the values of a record, so that nothing of it is kept; the
// values of a batch stay.
func (h *recordHeaders) reset() { h.vals[valKey], h.vals[valID], h.vals[valTimestamp] = "", "", "" }
