package replay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"time"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/connector"
	"wasmstream.io/platform/host"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/operator/record"
	"wasmstream.io/platform/runtime/plan"
	"wasmstream.io/platform/state"
	"wasmstream.io/platform/watermark"
)

// fetchWait is how long one read of the stream waits for its next
// record: the stream's end at the start is already there to read.
const fetchWait = time.Second

// stateBudget bounds the keyed state of one version: a key's state alone.
const stateBudget = 256 << 20

// run is one replay being set up and driven.
type run struct {
	env   Env
	req   Request
	job   *plan.Plan
	rt    *route
	snap  *snapshot
	kg    int
	log   *slog.Logger
	stop  string
	count int
	// seq is the stream sequence of the record being replayed.
	seq uint64
	// versions are the recorded module's operator and, with
	// Request.Module, the other one's.
	versions []*version
	report   func(Event) error
	// guests are closed at the end (the operators close their own).
	guests []*host.Guest
}

// Run replays req's key of the job env describes, reporting each event to
// report; the last event is an EventEnd. It returns the first error of a
// step, and the errors of this package (ErrUnknownCheckpoint, ...) for a
// request it cannot serve.
func Run(ctx context.Context, env Env, req Request, report func(Event) error) error {
	if len(req.Key) == 0 {
		return fmt.Errorf("%w: key: must not be empty", ErrBadRequest)
	}
	if req.Records < 0 {
		return fmt.Errorf("%w: records: must not be negative, got %d", ErrBadRequest, req.Records)
	}
	r := &run{env: env, req: req, job: env.Plan, report: report, log: env.Log}
	if r.log == nil {
		r.log = slog.Default()
	}
	if r.job.Job.Time == plan.TimeIngestion {
		return fmt.Errorf("%w: time: ingestion time stamps records with the clock, which a replay cannot reproduce", ErrUnsupported)
	}
	op, err := findOperator(r.job, req.Operator)
	if err != nil {
		return err
	}
	if r.rt, err = findRoute(op); err != nil {
		return err
	}
	if r.snap, err = findCheckpoint(ctx, env.Checkpoints, env.Job, req.Checkpoint); err != nil {
		return err
	}
	r.kg = state.KeyGroup(req.Key, r.job.Job.MaxParallelism)
	defer r.close(ctx)
	return r.drive(ctx)
}

// close releases the versions' operators and the guests of the chain.
func (r *run) close(ctx context.Context) {
	for _, v := range r.versions {
		if v.op != nil {
			_ = v.op.Close(ctx)
		}
	}
	for _, g := range r.guests {
		_ = g.Close(ctx)
	}
}

// drive restores the versions, reads the source from the checkpoint's
// positions and runs the chain over each record.
func (r *run) drive(ctx context.Context) error {
	srcV := r.rt.source
	js := srcV.Source.JetStream
	pos, err := r.snap.positions(ctx, srcV.ID)
	if err != nil {
		return err
	}
	end, err := streamEnd(ctx, r.env.JetStream, srcV.ID, js.Stream, js.Subjects, pos, r.req.Until)
	if err != nil {
		return err
	}
	if err := r.openVersions(ctx); err != nil {
		return err
	}
	filter := &keyFilter{r: r}
	var next operator.Stage = filter
	if len(r.versions) == 1 {
		filter.next = r.versions[0].op
	} else {
		filter.next = operator.Fanout{r.versions[0].op, r.versions[1].op}
	}
	next, err = r.upstream(next)
	if err != nil {
		return err
	}
	gen, head, err := r.sourceStages(next)
	if err != nil {
		return err
	}
	src, err := connector.NewJetStreamSource(ctx, r.env.JetStream, connector.JetStreamSourceConfig{
		Stream: js.Stream, Subjects: js.Subjects, Bounded: true, End: end, Start: pos,
		Subtask: 0, Parallelism: 1, Name: srcV.ID, OnGap: connector.GapSkip,
	})
	if err != nil {
		return fmt.Errorf("source %s: %w", srcV.ID, err)
	}
	defer func() { _ = src.Close() }()
	names, filters := splitNames(js.Subjects)
	if gen != nil {
		gen.SetSplits(src.Splits())
		gen.Names = names
		wms, err := r.snap.watermarks(ctx, srcV.ID)
		if err != nil {
			return err
		}
		gen.Restore(0, 1, wms)
		// The watermark at the checkpoint reaches the operator first, as
		// it had in the job before the barrier.
		if err := head.Tick(ctx, 0); err != nil {
			return err
		}
	}
	var b abi.Batch
	var lastSeq uint64
	for r.stop == "" {
		b.Reset()
		err := src.Fetch(ctx, &b, 1, fetchWait)
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("source %s: %w", srcV.ID, err)
		}
		if b.Len() > 0 {
			split := int(src.LastSplits()[0])
			lastSeq = src.Positions()[filters[split]]
			r.seq = lastSeq
			if gen != nil {
				gen.Split = split
			}
			if err := head.Process(ctx, b.Records); err != nil {
				return err
			}
		}
		if errors.Is(err, io.EOF) && r.stop == "" {
			r.stop = ReasonEnd
			if r.req.Until > 0 && lastSeq >= r.req.Until {
				r.stop = ReasonUntil
			}
		}
	}
	return r.report(Event{Event: EventEnd, Records: r.count, Outputs: r.versions[0].count, LastSeq: lastSeq, Reason: r.stop})
}

// splitNames name a source's splits as its watermark snapshots do (by
// subject filter, or "" for a whole stream) and as its positions do (">"
// for a whole stream).
func splitNames(subjects []string) (watermarks, positions []string) {
	if len(subjects) == 0 {
		return []string{""}, []string{">"}
	}
	return subjects, subjects
}

// policy is on_udf_error for the replay: a record or timer a function
// fails is reported, and the replay goes on.
func (r *run) policy(v *version, vertex string) *operator.ErrorPolicy {
	return &operator.ErrorPolicy{Mode: r.job.Job.OnUDFError.Policy, Vertex: vertex, Counts: &operator.ErrorCounts{}, Log: r.log,
		Report: func(_ context.Context, rec *abi.Record, cause error) error {
			ts := rec.Timestamp
			e := Event{Event: EventError, Key: Bytes(clone(rec.Key)), Value: Bytes(clone(rec.Value)), Timestamp: &ts, Error: cause.Error()}
			if v == nil {
				e.Answers = "record " + strconv.FormatUint(r.seq, 10)
				return r.report(e)
			}
			e.Answers = v.cause
			return v.emit(e)
		}}
}

// guest is an instance pool of f's module with the job's limits, closed
// with the run.
func (r *run) guest(mod *host.Module) *host.Guest {
	limits := r.job.Job.UDF
	return mod.NewGuest(host.InstanceConfig{MemoryLimit: limits.MemoryLimit, CallTimeout: limits.CallTimeout.Duration,
		Attrs: []slog.Attr{slog.String("job", r.env.Job), slog.String("replay", "true")}})
}

// module finds a module of the plan.
func (r *run) module(id string) (*host.Module, error) {
	m, ok := r.env.Module(id)
	if !ok {
		return nil, fmt.Errorf("%w: module: no module %s", ErrBadRequest, id)
	}
	return m, nil
}

// recordStage is record function f of vertex in front of next.
func (r *run) recordStage(vertex string, f *plan.Func, kind abi.Kind, next operator.Stage) (operator.Stage, error) {
	mod, err := r.module(f.Module)
	if err != nil {
		return nil, err
	}
	g := r.guest(mod)
	r.guests = append(r.guests, g)
	return record.NewFunction(kind, f.Module, f.Function, f.Index, g, r.job.Job.UDF.BatchSize, r.policy(nil, vertex), next), nil
}

// keyStage selects the key of edge e in front of next, when e keys.
func (r *run) keyStage(e *plan.Edge, next operator.Stage) (operator.Stage, error) {
	switch {
	case e.Ship != plan.ShipHash:
		return next, nil
	case e.KeyFn != nil:
		return r.recordStage(e.To.ID, e.KeyFn, abi.KindKey, next)
	case e.KeyField != "":
		return record.KeyField(e.KeyField, r.policy(nil, e.To.ID), next), nil
	}
	return next, nil
}

// upstream builds the record functions between the source and the keyed
// operator in front of next, with the key selection of each keying edge.
func (r *run) upstream(next operator.Stage) (operator.Stage, error) {
	s, err := r.keyStage(r.rt.keyBy, next)
	if err != nil {
		return nil, err
	}
	for i := len(r.rt.steps) - 1; i >= 0; i-- {
		v := r.rt.steps[i]
		if v.Op != nil && v.Op.Extract != nil {
			s = record.Extract(v.Op.Extract.Field, r.policy(nil, v.ID), s)
		} else if s, err = r.recordStage(v.ID, v.Fn, abi.Kind(v.Kind), s); err != nil {
			return nil, err
		}
		if s, err = r.keyStage(v.In[0], s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// sourceStages are the source's timestamp assigner and watermark generator
// in front of next, as the job's time and the source's watermark say. The
// generator emits a watermark after every record that raises it, as
// `interval: 0s` does: a periodic watermark followed the job's clock,
// which a replay cannot reproduce.
func (r *run) sourceStages(next operator.Stage) (*watermark.Generator, operator.Stage, error) {
	srcV := r.rt.source
	src := srcV.Source
	w := src.Watermark
	var gen *watermark.Generator
	s := next
	announce := func(context.Context, bool) error { return nil }
	if r.job.Job.Time != plan.TimeProcessing && w != nil && w.Strategy != "" && w.Strategy != "none" {
		switch w.Strategy {
		case "punctuated":
			gen = watermark.NewGenerator(watermark.Punctuated, 0, 0, 0, announce, s)
			f := srcV.WatermarkFn
			mod, err := r.module(f.Module)
			if err != nil {
				return nil, nil, err
			}
			g := r.guest(mod)
			r.guests = append(r.guests, g)
			gen.Punct = record.NewPunctuator(f.Module, f.Function, f.Index, g, r.job.Job.UDF.BatchSize, r.policy(nil, srcV.ID))
		default:
			gen = watermark.NewGenerator(watermark.Bounded, w.MaxOutOfOrderness.Milliseconds(), 0, 0, announce, s)
		}
		gen.Clock = func() int64 { return 0 }
		s = gen
	}
	switch {
	case src.Timestamp != nil && src.Timestamp.Field != "":
		s = record.TimestampField(src.Timestamp.Field, r.policy(nil, srcV.ID), s)
	case srcV.Fn != nil:
		var err error
		if s, err = r.recordStage(srcV.ID, srcV.Fn, abi.KindTimestamp, s); err != nil {
			return nil, nil, err
		}
	}
	return gen, s, nil
}

// keyFilter passes the key's records on to the operators, reporting each,
// and stops the replay after Request.Records of them.
type keyFilter struct {
	r    *run
	next operator.Stage
	wm   int64
	mine []abi.Record
}

func (f *keyFilter) Process(ctx context.Context, recs []abi.Record) error {
	f.mine = f.mine[:0]
	for _, rec := range recs {
		if string(rec.Key) == string(f.r.req.Key) {
			f.mine = append(f.mine, rec)
		}
	}
	if len(f.mine) == 0 {
		return nil
	}
	seq := f.r.seq
	cause := "record " + strconv.FormatUint(seq, 10)
	for _, v := range f.r.versions {
		v.cause = cause
	}
	for i := range f.mine {
		rec := &f.mine[i]
		ts, wm := rec.Timestamp, f.wm
		if err := f.r.report(Event{Event: EventInput, Seq: seq, Key: Bytes(clone(rec.Key)), Value: Bytes(clone(rec.Value)), Timestamp: &ts, Watermark: &wm}); err != nil {
			return err
		}
	}
	f.r.count += len(f.mine)
	if err := f.next.Process(ctx, f.mine); err != nil {
		return err
	}
	if err := f.r.diff(); err != nil {
		return err
	}
	if f.r.req.Records > 0 && f.r.count >= f.r.req.Records {
		f.r.stop = ReasonRecords
	}
	return nil
}

func (f *keyFilter) Advance(ctx context.Context, wm int64) error {
	f.wm = wm
	cause := "watermark " + strconv.FormatInt(wm, 10)
	for _, v := range f.r.versions {
		v.cause = cause
	}
	if err := f.next.Advance(ctx, wm); err != nil {
		return err
	}
	return f.r.diff()
}

func (f *keyFilter) Tick(ctx context.Context, now int64) error { return nil }
func (f *keyFilter) Finish(ctx context.Context) error          { return nil }
func (f *keyFilter) Close(ctx context.Context) error           { return nil }
