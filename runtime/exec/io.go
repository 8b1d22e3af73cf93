package exec

import (
	"context"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/connector"
	"wasmstream.io/platform/runtime/exchange"
)

// sinkStage writes to a connector sink; finish waits for every write to be
// acknowledged.
type sinkStage struct {
	sink connector.Sink
}

func (s *sinkStage) Process(ctx context.Context, recs []abi.Record) error {
	return s.sink.Write(ctx, recs)
}

func (s *sinkStage) Advance(context.Context, int64) error { return nil }
func (s *sinkStage) Tick(context.Context, int64) error    { return nil }
func (s *sinkStage) Finish(ctx context.Context) error     { return s.sink.Flush(ctx) }
func (s *sinkStage) Close(context.Context) error          { return s.sink.Close() }

// exchangeOut sends records to the subtasks of the next task through the
// credit-based exchange, choosing the channel with a partitioner.
type exchangeOut struct {
	writer *exchange.Writer
	part   exchange.Partitioner
	// broadcast sends every record to every channel.
	broadcast bool
	channels  int
	// sent is the last watermark broadcast, if any (hasSent).
	sent    int64
	hasSent bool
	// carriesTime: the job's processing time is scripted, and travels in
	// band; timeSent is the last time sent.
	carriesTime bool
	timeSent    int64
}

func (e *exchangeOut) Process(ctx context.Context, recs []abi.Record) error {
	if !e.broadcast {
		return e.writer.EmitBatch(ctx, e.part, recs)
	}
	for i := range recs {
		for c := 0; c < e.channels; c++ {
			if err := e.writer.Emit(ctx, c, &recs[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// Advance broadcasts the watermark on every channel, in band behind the
// records already emitted, unless it is not above the last one sent.
func (e *exchangeOut) Advance(ctx context.Context, wm int64) error {
	if e.hasSent && wm <= e.sent {
		return nil
	}
	e.sent, e.hasSent = wm, true
	return e.writer.BroadcastEvent(ctx, exchange.Watermark{Time: wm})
}

// Tick sends a scripted processing time on when it rose since the last
// one sent (scriptedtime.go); the wall clock is not sent.
func (e *exchangeOut) Tick(ctx context.Context, now int64) error {
	if !e.carriesTime || now <= e.timeSent {
		return nil
	}
	e.timeSent = now
	return e.writer.BroadcastEvent(ctx, exchange.ProcessingTime{Time: now})
}

func (e *exchangeOut) Finish(ctx context.Context) error { return e.writer.Close(ctx) }
func (e *exchangeOut) Close(context.Context) error      { return nil }
