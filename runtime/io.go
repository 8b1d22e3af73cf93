package runtime

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

func (s *sinkStage) process(ctx context.Context, recs []abi.Record) error {
	return s.sink.Write(ctx, recs)
}

func (s *sinkStage) finish(ctx context.Context) error { return s.sink.Flush(ctx) }
func (s *sinkStage) close(context.Context) error      { return s.sink.Close() }

// exchangeOut sends records to the subtasks of the next task through the
// credit-based exchange, choosing the channel with a partitioner.
type exchangeOut struct {
	writer *exchange.Writer
	part   exchange.Partitioner
	// broadcast sends every record to every channel.
	broadcast bool
	channels  int
}

func (e *exchangeOut) process(ctx context.Context, recs []abi.Record) error {
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

func (e *exchangeOut) finish(ctx context.Context) error { return e.writer.Close(ctx) }
func (e *exchangeOut) close(context.Context) error      { return nil }
