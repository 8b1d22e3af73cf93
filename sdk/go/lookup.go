package udf

import (
	"fmt"
	"sort"

	"wasmstream.io/platform/abi"
)

// LookupKind says what a lookup reads: a NATS KV bucket or an HTTP URL.
type LookupKind = abi.LookupKind

// Lookup kinds.
const (
	LookupKV   = abi.LookupKV
	LookupHTTP = abi.LookupHTTP
)

// LookupResult is the result of one lookup, in the order the request
// function asked for them.
type LookupResult struct {
	// Found: the KV key exists, or the HTTP GET answered 2xx. Otherwise the
	// key is absent (or deleted), or the server answered 404.
	Found bool
	// Value is the KV entry's value or the HTTP response body.
	Value []byte
}

// Lookups collects the lookups a request function asks for one record.
type Lookups struct {
	c       *caller
	scratch []byte
	n       int
	err     error
}

// KV asks for key of NATS KV bucket.
func (l *Lookups) KV(bucket, key string) {
	l.add(abi.LookupRequest{Kind: abi.LookupKV, Target: []byte(bucket), Key: []byte(key)})
}

// HTTPGet asks for the body of an HTTP GET of url; its host must be on the
// job's lookups.http.allow list.
func (l *Lookups) HTTPGet(url string) {
	l.add(abi.LookupRequest{Kind: abi.LookupHTTP, Target: []byte(url)})
}

func (l *Lookups) add(r abi.LookupRequest) {
	if l.n++; l.n > abi.MaxLookupsPerRecord {
		l.err = fmt.Errorf("udf: a record asked for more than %d lookups", abi.MaxLookupsPerRecord)
		return
	}
	l.scratch = abi.AppendLookupRequest(l.scratch[:0], &r)
	c := l.c
	c.out = abi.AppendEntryRecord(c.out, c.index, 0, &Record{Value: l.scratch})
	c.count++
}

// AsyncRequest registers the first half of an async lookup (Flink's
// AsyncFunction.asyncInvoke): for each input record, f asks for the
// lookups the record needs (none is fine) and returns without waiting. The
// platform issues them concurrently, and once they have all completed it
// calls the LookupResult function the job spec names with the record and
// the results. If f returns an error, the record fails with it and its
// lookups are not issued.
func AsyncRequest(name string, f func(r Record, ask *Lookups) error) {
	mustFunc(name, f == nil)
	functions.add(function{name: name, kind: abi.KindLookupRequest, run: func(c *caller, frame []byte) []byte {
		return c.lookupRequest(f, frame)
	}})
}

// AsyncResult registers the second half of an async lookup: f gets a
// record and its lookups' results and calls emit zero or more times, as a
// flat map function does.
func AsyncResult(name string, f func(r Record, results []LookupResult, emit func(Record)) error) {
	mustFunc(name, f == nil)
	functions.add(function{name: name, kind: abi.KindLookupResult, run: func(c *caller, frame []byte) []byte {
		return c.lookupResult(f, frame)
	}})
}

func (c *caller) lookupRequest(f func(Record, *Lookups) error, frame []byte) []byte {
	if err := c.in.Reset(frame); err != nil {
		return c.fail(err.Error())
	}
	c.out = abi.AppendInputHeader(c.out[:0], 0)
	c.count, c.index = 0, 0
	ask := &Lookups{c: c}
	for ; c.in.Next(&c.rec); c.index++ {
		c.mark, c.marked = len(c.out), c.count
		ask.n, ask.err = 0, nil
		err := callRequest(f, c.rec, ask)
		if err == nil {
			err = ask.err
		}
		if err != nil {
			c.reject(err.Error())
		}
	}
	if err := c.in.Err(); err != nil {
		return c.fail(err.Error())
	}
	abi.SetCount(c.out, c.count)
	return c.out
}

// callRequest runs f, turning a panic into the record's error.
func callRequest(f func(Record, *Lookups) error, r Record, ask *Lookups) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return f(r, ask)
}

func (c *caller) lookupResult(f func(Record, []LookupResult, func(Record)) error, frame []byte) []byte {
	var lr abi.LookupReader
	if err := lr.Reset(frame); err != nil {
		return c.fail(err.Error())
	}
	c.out = abi.AppendInputHeader(c.out[:0], 0)
	c.count, c.index = 0, 0
	var results []LookupResult
	for ; ; c.index++ {
		res, ok := lr.Next(&c.rec)
		if !ok {
			break
		}
		results = results[:0]
		for _, r := range res {
			results = append(results, LookupResult{Found: r.Status == abi.LookupFound, Value: r.Value})
		}
		c.mark, c.marked = len(c.out), c.count
		c.snapshot()
		if err := c.callResult(f, results); err != nil {
			c.reject(err.Error())
		}
	}
	if err := lr.Err(); err != nil {
		return c.fail(err.Error())
	}
	abi.SetCount(c.out, c.count)
	return c.out
}

// callResult runs f with emit bound to the current input, turning a panic
// into the input's error.
func (c *caller) callResult(f func(Record, []LookupResult, func(Record)) error, results []LookupResult) (err error) {
	defer func() {
		c.flatMapping = false
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	c.flatMapping = true
	return f(c.rec, results, c.emit)
}

// InvokeLookup runs the registered lookup_request function request over
// in, answers its lookups from answer (nil for none: every lookup is then
// absent), and runs the lookup_result function result over the records
// with their results, through the same frames as a call into the
// WebAssembly module. It returns what the result function emitted,
// resolved against in and in input order; a record whose request failed
// appears once with its error. It is meant for unit tests of UDFs.
func InvokeLookup(request, result string, in []Record, answer func(kind LookupKind, target, key string) (LookupResult, error)) ([]Output, error) {
	reqFn, err := lookupKind(request, abi.KindLookupRequest)
	if err != nil {
		return nil, err
	}
	resFn, err := lookupKind(result, abi.KindLookupResult)
	if err != nil {
		return nil, err
	}
	asked, err := resolve(newCaller(&functions).call(reqFn, abi.AppendFrame(nil, in)), in)
	if err != nil {
		return nil, err
	}
	var outs []Output
	results := make([][]abi.LookupResult, len(in))
	for _, o := range asked {
		if o.Err != "" {
			outs = append(outs, o)
			results[o.Index] = nil
			continue
		}
		req, err := abi.ParseLookupRequest(o.Record.Value)
		if err != nil {
			return nil, fmt.Errorf("udf: record %d: %w", o.Index, err)
		}
		res := LookupResult{}
		if answer != nil {
			if res, err = answer(req.Kind, string(req.Target), string(req.Key)); err != nil {
				return nil, fmt.Errorf("udf: record %d: %s lookup %q: %w", o.Index, req.Kind, req.Target, err)
			}
		}
		st := abi.LookupAbsent
		if res.Found {
			st = abi.LookupFound
		}
		results[o.Index] = append(results[o.Index], abi.LookupResult{Status: st, Value: res.Value})
	}
	failed := map[int]bool{}
	for _, o := range outs {
		failed[o.Index] = true
	}
	var kept []Record
	var index []int
	frame := abi.AppendInputHeader(nil, 0)
	for i := range in {
		if failed[i] {
			continue
		}
		frame = abi.AppendLookupInput(frame, &in[i], results[i])
		kept = append(kept, in[i])
		index = append(index, i)
	}
	abi.SetCount(frame, uint32(len(kept)))
	emitted, err := resolve(newCaller(&functions).call(resFn, frame), kept)
	if err != nil {
		return nil, err
	}
	for _, o := range emitted {
		o.Index = index[o.Index]
		outs = append(outs, o)
	}
	sort.SliceStable(outs, func(i, j int) bool { return outs[i].Index < outs[j].Index })
	return outs, nil
}
