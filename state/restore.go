package state

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// ErrSnapshot is wrapped by every error about a malformed snapshot.
var ErrSnapshot = errors.New("malformed state snapshot")

// maxGrowStep bounds how much a restore allocates ahead of the bytes it has
// actually read, so that a corrupt length cannot make it allocate much.
const maxGrowStep = 1 << 20

// Restore adds the state and timers of the key groups it owns from
// snapshots (streams written by Snapshot.WriteTo) and returns those timers.
// The snapshots may come from any parallelism with the same max parallelism:
// a snapshot's sections of other key groups are skipped. States are matched
// by name: a state the snapshot has and this Keyed does not declare is
// dropped, one with another kind is an error. TTL stamps are added (now) or
// removed when a state's TTL was turned on or off.
func (k *Keyed) Restore(ctx context.Context, srcs []io.Reader) ([]Timer, error) {
	var timers []Timer
	for i, src := range srcs {
		r := &snapReader{k: k, r: bufio.NewReaderSize(src, 64<<10), now: k.clock.Now()}
		if err := r.read(ctx, &timers); err != nil {
			return nil, fmt.Errorf("state restore: snapshot %d: %w", i, err)
		}
	}
	return timers, nil
}

type snapState struct {
	local int
	kind  Kind
	ttl   bool
}

type snapReader struct {
	k      *Keyed
	r      *bufio.Reader
	now    int64
	states []snapState
	buf    []byte
	ck     []byte
	tmp    []byte
}

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrSnapshot, fmt.Sprintf(format, args...))
}

// readN reads n bytes into r.buf, growing it only as data arrives.
func (r *snapReader) readN(n uint32) ([]byte, error) {
	r.buf = r.buf[:0]
	for left := int(n); left > 0; {
		step := min(left, maxGrowStep)
		start := len(r.buf)
		r.buf = append(r.buf, make([]byte, step)...)
		if _, err := io.ReadFull(r.r, r.buf[start:]); err != nil {
			return nil, malformed("truncated: %v", err)
		}
		left -= step
	}
	return r.buf, nil
}

func (r *snapReader) u32() (uint32, error) {
	b, err := r.readN(4)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b), nil
}

func (r *snapReader) read(ctx context.Context, timers *[]Timer) error {
	first, last, err := r.header()
	if err != nil {
		return err
	}
	for kg := first; kg <= last; kg++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		got, err := r.u32()
		if err != nil {
			return err
		}
		if int(got) != kg {
			return malformed("section of key group %d where %d belongs", got, kg)
		}
		if err := r.section(kg, r.k.rng.Contains(kg), timers); err != nil {
			return fmt.Errorf("key group %d: %w", kg, err)
		}
	}
	trailer, err := r.readN(uint32(len(snapTrailer)))
	if err != nil {
		return err
	}
	if string(trailer) != snapTrailer {
		return malformed("no trailer after the last key group")
	}
	return nil
}

func (r *snapReader) header() (first, last int, err error) {
	b, err := r.readN(4 + 1 + 4 + 4 + 4 + 8 + 2)
	if err != nil {
		return 0, 0, err
	}
	if string(b[:4]) != snapMagic {
		return 0, 0, malformed("not a state snapshot")
	}
	if b[4] != snapVersion {
		return 0, 0, malformed("version %d, want %d", b[4], snapVersion)
	}
	maxP := binary.LittleEndian.Uint32(b[5:])
	f, l := binary.LittleEndian.Uint32(b[9:]), binary.LittleEndian.Uint32(b[13:])
	count := binary.LittleEndian.Uint16(b[25:])
	if int64(maxP) != int64(r.k.maxP) {
		return 0, 0, fmt.Errorf("snapshot of max parallelism %d cannot restore into %d key groups", maxP, r.k.maxP)
	}
	if f > l || l >= maxP {
		return 0, 0, malformed("key groups [%d, %d] of %d", f, l, maxP)
	}
	r.states = make([]snapState, count)
	for i := range r.states {
		b, err := r.readN(2)
		if err != nil {
			return 0, 0, err
		}
		raw, err := r.readN(uint32(binary.LittleEndian.Uint16(b)))
		if err != nil {
			return 0, 0, err
		}
		name := string(raw)
		local := r.k.lookup(name)
		b, err = r.readN(2)
		if err != nil {
			return 0, 0, err
		}
		kind := Kind(b[0])
		if kind < KindValue || kind > KindMap {
			return 0, 0, malformed("state %q of kind %d", name, b[0])
		}
		if local >= 0 && r.k.states[local].kind != kind {
			return 0, 0, fmt.Errorf("state %q: the snapshot has a %s state, the job declares a %s state", name, kind, r.k.states[local].kind)
		}
		r.states[i] = snapState{local: local, kind: kind, ttl: b[1]&stateFlagTTL != 0}
	}
	return int(f), int(l), nil
}

// lookup is the id of the named state, or -1.
func (k *Keyed) lookup(name string) int {
	for i := range k.states {
		if k.states[i].name == name {
			return i
		}
	}
	return -1
}

// section reads one key group's chunks, applying their entries when keep.
func (r *snapReader) section(kg int, keep bool, timers *[]Timer) error {
	for {
		n, err := r.u32()
		if err != nil || n == 0 {
			return err
		}
		chunk, err := r.readN(n)
		if err != nil || !keep {
			if err != nil {
				return err
			}
			continue
		}
		d := decoder{b: chunk}
		for len(d.b) > 0 && d.err == nil {
			r.entry(kg, &d, timers)
		}
		if d.err != nil {
			return d.err
		}
	}
}

// entry decodes and applies one entry.
func (r *snapReader) entry(kg int, d *decoder, timers *[]Timer) {
	typ := d.u8()
	if typ == entryTimer {
		t := Timer{Domain: d.u8(), Timestamp: int64(d.u64())}
		key, ns := d.bytes(), d.bytes()
		if d.err == nil {
			d.err = r.checkKey(kg, key)
		}
		if d.err == nil && r.k.keeps(key) {
			t.Key, t.Namespace = append([]byte(nil), key...), append([]byte(nil), ns...)
			*timers = append(*timers, t)
		}
		return
	}
	if typ != entryPoint && typ != entryMap {
		d.fail("entry type %d", typ)
		return
	}
	id := d.u16()
	key, ns := d.bytes(), d.bytes()
	var uk []byte
	if typ == entryMap {
		uk = d.bytes()
	}
	v := d.bytes()
	if d.err != nil {
		return
	}
	if int(id) >= len(r.states) {
		d.fail("entry of state %d of %d", id, len(r.states))
		return
	}
	ss := r.states[id]
	if (typ == entryMap) != (ss.kind == KindMap) {
		d.fail("entry type %d for a %s state", typ, ss.kind)
		return
	}
	if d.err = r.checkKey(kg, key); d.err != nil || ss.local < 0 || !r.k.keeps(key) {
		return
	}
	st := &r.k.states[ss.local]
	if v, d.err = r.convert(ss, st, v); d.err != nil {
		return
	}
	r.ck = compositeKey(r.ck[:0], uint16(ss.local), key, ns)
	if typ == entryMap {
		d.err = r.k.st.subPut(kg, r.ck, uk, v)
	} else {
		d.err = r.k.st.put(kg, r.ck, v)
	}
}

// keeps reports whether a restore keeps key's entries (Config.OnlyKey).
func (k *Keyed) keeps(key []byte) bool {
	return k.onlyKey == nil || bytes.Equal(k.onlyKey, key)
}

func (r *snapReader) checkKey(kg int, key []byte) error {
	if got := KeyGroup(key, r.k.maxP); got != kg {
		return malformed("key %q of key group %d in the section of %d", key, got, kg)
	}
	return nil
}

// convert checks a stored value from a snapshot and adds or strips TTL
// stamps where the snapshot's state and st differ.
func (r *snapReader) convert(ss snapState, st *stateInfo, v []byte) ([]byte, error) {
	had, has := ss.ttl, st.ttl > 0
	if ss.kind != KindList {
		switch {
		case had && len(v) < tsLen:
			return nil, malformed("state %q: a value without its TTL stamp", st.name)
		case had && !has:
			return v[tsLen:], nil
		case !had && has:
			r.tmp = stamp(r.tmp[:0], r.now, v)
			return r.tmp, nil
		}
		return v, nil
	}
	from := stateInfo{kind: KindList}
	if had {
		from.ttl = 1
	}
	if !from.validList(v) {
		return nil, malformed("state %q: malformed list", st.name)
	}
	if had == has {
		return v, nil
	}
	r.tmp = r.tmp[:0]
	for rest := v; len(rest) > 0; {
		ts, data, next, _ := from.nextElement(rest)
		if !had {
			ts = r.now
		}
		r.tmp = st.appendElement(r.tmp, ts, data)
		rest = next
	}
	return r.tmp, nil
}

// decoder reads a chunk's entries with bounds checks.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = malformed(format, args...)
	}
	d.b = nil
}

func (d *decoder) take(n uint64) []byte {
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.fail("entry needs %d bytes, chunk has %d", n, len(d.b))
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) u8() uint8 {
	if b := d.take(1); b != nil {
		return b[0]
	}
	return 0
}

func (d *decoder) u16() uint16 {
	if b := d.take(2); b != nil {
		return binary.LittleEndian.Uint16(b)
	}
	return 0
}

func (d *decoder) u64() uint64 {
	if b := d.take(8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

func (d *decoder) bytes() []byte {
	b := d.take(4)
	if b == nil {
		return nil
	}
	return d.take(uint64(binary.LittleEndian.Uint32(b)))
}
