package exec

import (
	"context"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/connector"
	"wasmstream.io/platform/runtime/plan"
)

// testStream builds subtask i of test_stream source v, resuming after the
// steps the restored checkpoint counts. Its task passes the script's
// watermarks and processing time into its chain (see task).
func (b *builder) testStream(ctx context.Context, v *plan.Vertex, i int) (connector.Source, error) {
	var steps []connector.TestStep
	for _, st := range v.Source.TestStream.Steps {
		switch {
		case st.Record != nil:
			r := st.Record
			steps = append(steps, connector.TestStep{Record: abi.Record{Key: []byte(r.Key), Value: []byte(r.Value), Timestamp: r.Timestamp}})
		case st.Watermark != nil:
			steps = append(steps, connector.TestStep{Watermark: st.Watermark})
		case st.AdvanceProcessingTime.Duration > 0:
			steps = append(steps, connector.TestStep{AdvanceProcessingTime: st.AdvanceProcessingTime.Milliseconds()})
		}
	}
	var start map[string]uint64
	if b.restore != nil {
		pos, err := b.restore.positions(ctx, v.ID)
		if err != nil {
			return nil, err
		}
		start = pos
	}
	return connector.NewTestStream(steps, i, start), nil
}
