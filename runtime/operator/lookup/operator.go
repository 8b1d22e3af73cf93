package lookup

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/operator"
)

// Config configures an async lookup operator.
type Config struct {
	Vertex string
	// Request asks for each record's lookups; nil: Bucket or URL does.
	Request *operator.RecordCall
	// Bucket looks each record's key up in a KV bucket; URL (with
	// KeyPlaceholder) GETs a URL made from the key. Used when Request is nil.
	Bucket string
	URL    string
	// Result is the lookup_result function.
	Result operator.RecordCall
	// Capacity bounds the records in flight; MaxBytes their bytes (half)
	// and their results' (the other half, a share per record).
	Capacity int
	MaxBytes int64
	// Timeout bounds one attempt of a lookup; Retries are the attempts
	// after the first.
	Timeout time.Duration
	Retries int
	// Ordered: outputs leave in input order; otherwise as completed
	// between watermarks.
	Ordered   bool
	BatchSize int
	Policy    *operator.ErrorPolicy
	Fetch     Fetcher
	Next      operator.Stage
}

// KeyPlaceholder is what Config.URL has in place of the record's key.
const KeyPlaceholder = "{key}"

// entry is a record in the operator's queue, or a watermark that must not
// be passed. The record's bytes are owned by buf.
type entry struct {
	watermark bool
	wm        int64
	rec       abi.Record
	buf       []byte
	reqs      []abi.LookupRequest
	// results and err are written by the entry's lookup goroutine and read
	// by the task goroutine once the entry came back on the operator's
	// completed channel; done is set then, and seq numbers completions.
	results []abi.LookupResult
	err     error
	done    bool
	seq     uint64
	size    int64
}

// Op is the async lookup operator. Everything belongs to the task
// goroutine except the lookup goroutines, which own their entry until they
// send it on completed.
type Op struct {
	cfg Config
	// queue holds the records not yet emitted and the watermarks behind
	// them, in arrival order.
	queue     []*entry
	inFlight  int
	bytes     int64
	completed chan *entry
	doneSeq   uint64
	// restored are records of a snapshot, looked up again first.
	restored []abi.Record
	started  bool

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	asked  [][]abi.LookupRequest
	admit  []int
	frame  []byte
	reader abi.OutputReader
	answer operator.Answer
	out    []abi.Record
	heads  []abi.Header
	emit   []*entry
}

// New builds the operator.
func New(cfg Config) *Op {
	ctx, cancel := context.WithCancel(context.Background())
	return &Op{cfg: cfg, completed: make(chan *entry, cfg.Capacity), ctx: ctx, cancel: cancel}
}

// recordBudget is the most bytes of records in flight; resultShare the
// most bytes of one record's results.
func (o *Op) recordBudget() int64 { return o.cfg.MaxBytes / 2 }
func (o *Op) resultShare() int    { return int(o.cfg.MaxBytes / 2 / int64(o.cfg.Capacity)) }

func (o *Op) Process(ctx context.Context, recs []abi.Record) error {
	if err := o.start(ctx); err != nil {
		return err
	}
	for len(recs) > 0 {
		n := min(len(recs), o.cfg.BatchSize)
		if err := o.chunk(ctx, recs[:n]); err != nil {
			return err
		}
		recs = recs[n:]
	}
	return o.drain(ctx)
}

// start looks up the restored records again, before anything else.
func (o *Op) start(ctx context.Context) error {
	if o.started {
		return nil
	}
	o.started = true
	recs := o.restored
	o.restored = nil
	for len(recs) > 0 {
		n := min(len(recs), o.cfg.BatchSize)
		if err := o.chunk(ctx, recs[:n]); err != nil {
			return err
		}
		recs = recs[n:]
	}
	return nil
}

// chunk asks for the lookups of at most a batch of records and admits
// them. A request call that fails as a whole is narrowed down to its
// poison records, which is safe: asking has no effects.
func (o *Op) chunk(ctx context.Context, recs []abi.Record) error {
	if cap(o.asked) < len(recs) {
		o.asked = make([][]abi.LookupRequest, len(recs))
	}
	o.asked = o.asked[:len(recs)]
	o.admit = o.admit[:0]
	err := o.cfg.Policy.Isolate(0, len(recs), func(lo, hi int) error {
		return o.ask(ctx, recs, lo, hi)
	}, func(i int, err error) error { return o.cfg.Policy.RecordFailed(ctx, &recs[i], err) })
	if err != nil {
		return err
	}
	for _, i := range o.admit {
		if err := o.push(ctx, &recs[i], o.asked[i]); err != nil {
			return err
		}
	}
	return nil
}

// ask fills o.asked[lo:hi] and notes in o.admit the records to look up;
// records that failed go to the error policy.
func (o *Op) ask(ctx context.Context, recs []abi.Record, lo, hi int) error {
	for i := lo; i < hi; i++ {
		o.asked[i] = o.asked[i][:0]
	}
	var failed []int
	var msgs []string
	if o.cfg.Request == nil {
		for i := lo; i < hi; i++ {
			req, err := o.template(&recs[i])
			if err != nil {
				failed, msgs = append(failed, i), append(msgs, err.Error())
				continue
			}
			o.asked[i] = append(o.asked[i], req)
		}
	} else {
		call := o.cfg.Request
		bad := -1
		err := call.Run(ctx, recs[lo:hi], func(e *abi.Entry, _ bool, v operator.Verdict) error {
			i := lo + int(e.Index)
			if e.Tag != abi.TagError && e.Tag != abi.TagRecord {
				return call.BadOutput(fmt.Errorf("lookup_request function wrote a %s entry", operator.TagName(e.Tag)))
			}
			switch v {
			case operator.Fail:
				if bad == i {
					return nil
				}
				o.asked[i] = o.asked[i][:0]
				failed, msgs = append(failed, i), append(msgs, "")
			case operator.Emit:
				if bad == i {
					return nil
				}
				req, err := abi.ParseLookupRequest(e.Value)
				if err == nil && len(o.asked[i]) == abi.MaxLookupsPerRecord {
					err = fmt.Errorf("more than %d lookups for one record", abi.MaxLookupsPerRecord)
				}
				if err != nil {
					bad = i
					o.asked[i] = o.asked[i][:0]
					failed, msgs = append(failed, i), append(msgs, err.Error())
					return nil
				}
				o.asked[i] = append(o.asked[i], req)
			}
			return nil
		})
		if err != nil {
			return err
		}
		for k, i := range failed {
			if msgs[k] == "" {
				msgs[k] = call.ReportedError(i - lo)
			}
		}
	}
	next := 0
	for i := lo; i < hi; i++ {
		if next < len(failed) && failed[next] == i {
			err := fmt.Errorf("udf[%s] function[%s]: %s", o.requestModule(), o.requestName(), msgs[next])
			next++
			if err := o.cfg.Policy.RecordFailed(ctx, &recs[i], err); err != nil {
				return err
			}
			continue
		}
		o.admit = append(o.admit, i)
	}
	return nil
}

func (o *Op) requestModule() string {
	if o.cfg.Request != nil {
		return o.cfg.Request.Module
	}
	return o.cfg.Result.Module
}

func (o *Op) requestName() string {
	switch {
	case o.cfg.Request != nil:
		return o.cfg.Request.Function
	case o.cfg.Bucket != "":
		return "bucket " + o.cfg.Bucket
	}
	return "url " + o.cfg.URL
}

// template is the lookup of the spec's bucket or url for rec.
func (o *Op) template(rec *abi.Record) (abi.LookupRequest, error) {
	if len(rec.Key) == 0 {
		return abi.LookupRequest{}, errors.New("the record has no key to look up")
	}
	if o.cfg.Bucket != "" {
		return abi.LookupRequest{Kind: abi.LookupKV, Target: []byte(o.cfg.Bucket), Key: rec.Key}, nil
	}
	u := strings.ReplaceAll(o.cfg.URL, KeyPlaceholder, url.PathEscape(string(rec.Key)))
	return abi.LookupRequest{Kind: abi.LookupHTTP, Target: []byte(u)}, nil
}

// push copies rec and its requests into the queue, waiting for room, and
// starts its lookups.
func (o *Op) push(ctx context.Context, rec *abi.Record, reqs []abi.LookupRequest) error {
	size := int64(rec.Size())
	for i := range reqs {
		size += int64(len(reqs[i].Target) + len(reqs[i].Key) + 16)
	}
	if size > o.recordBudget() {
		return o.cfg.Policy.RecordFailed(ctx, rec, fmt.Errorf("record and its lookups take %d bytes, more than half of async_lookup.max_bytes (%d)", size, o.cfg.MaxBytes))
	}
	for o.inFlight >= o.cfg.Capacity || o.bytes+size > o.recordBudget() {
		if err := o.wait(ctx); err != nil {
			return err
		}
	}
	e := &entry{size: size}
	e.buf = make([]byte, 0, size)
	e.rec = copyRecord(&e.buf, rec)
	e.reqs = make([]abi.LookupRequest, len(reqs))
	for i, r := range reqs {
		e.reqs[i] = abi.LookupRequest{Kind: r.Kind, Target: own(&e.buf, r.Target), Key: own(&e.buf, r.Key)}
	}
	o.queue = append(o.queue, e)
	o.inFlight++
	o.bytes += size
	o.wg.Add(1)
	go o.lookUp(e)
	return nil
}

// own appends b to *buf and returns the copy.
func own(buf *[]byte, b []byte) []byte {
	start := len(*buf)
	*buf = append(*buf, b...)
	return (*buf)[start:len(*buf):len(*buf)]
}

func copyRecord(buf *[]byte, r *abi.Record) abi.Record {
	out := abi.Record{Key: own(buf, r.Key), Value: own(buf, r.Value), Timestamp: r.Timestamp}
	if len(r.Headers) > 0 {
		out.Headers = make([]abi.Header, len(r.Headers))
		for i, h := range r.Headers {
			out.Headers[i] = abi.Header{Name: own(buf, h.Name), Value: own(buf, h.Value)}
		}
	}
	return out
}

// lookUp runs on its own goroutine: it performs e's lookups concurrently,
// each with its attempts, and hands e back.
func (o *Op) lookUp(e *entry) {
	defer o.wg.Done()
	e.results = make([]abi.LookupResult, len(e.reqs))
	limit := o.resultShare() / max(1, len(e.reqs))
	switch len(e.reqs) {
	case 0:
	case 1:
		// The common case needs no second goroutine.
		e.results[0], e.err = o.attempts(&e.reqs[0], limit)
	default:
		errs := make([]error, len(e.reqs))
		var wg sync.WaitGroup
		for i := range e.reqs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				e.results[i], errs[i] = o.attempts(&e.reqs[i], limit)
			}()
		}
		wg.Wait()
		e.err = errors.Join(errs...)
	}
	select {
	case o.completed <- e:
	case <-o.ctx.Done():
	}
}

// attempts performs a lookup, trying again after a timeout or a failure
// up to Retries times; a refused lookup is not tried again.
func (o *Op) attempts(req *abi.LookupRequest, limit int) (abi.LookupResult, error) {
	var err error
	for attempt := 0; attempt <= o.cfg.Retries; attempt++ {
		ctx, cancel := context.WithTimeout(o.ctx, o.cfg.Timeout)
		var res abi.LookupResult
		res, err = o.cfg.Fetch.Fetch(ctx, req, limit)
		timedOut := ctx.Err() == context.DeadlineExceeded
		cancel()
		if err == nil {
			return res, nil
		}
		if timedOut {
			err = fmt.Errorf("timed out after %s: %w", o.cfg.Timeout, err)
		}
		if errors.Is(err, ErrRefused) || o.ctx.Err() != nil {
			break
		}
	}
	if attempt := o.cfg.Retries + 1; !errors.Is(err, ErrRefused) && attempt > 1 {
		err = fmt.Errorf("%w (%d attempts)", err, attempt)
	}
	return abi.LookupResult{}, fmt.Errorf("%s lookup %q: %w", req.Kind, describe(req), err)
}

func describe(req *abi.LookupRequest) string {
	if req.Kind == abi.LookupKV {
		return string(req.Target) + "/" + string(req.Key)
	}
	return string(req.Target)
}
