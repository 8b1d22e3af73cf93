package spec

import (
	"fmt"
	"time"
)

// TestStream is a source that plays a fixed script of records, watermarks
// and processing-time advances, in order and the same way on every run
// (Flink's TestStream): for tests of a whole job under exact event and
// processing time. It ends after its last step.
type TestStream struct {
	Steps []TestStep `json:"steps" required:"true"`
}

// TestStep is one step of a test stream: exactly one of Record, Watermark
// and AdvanceProcessingTime.
type TestStep struct {
	Record *TestRecord `json:"record,omitempty"`
	// Watermark emits a watermark (milliseconds since the epoch); it must
	// not go back.
	Watermark *int64 `json:"watermark,omitempty"`
	// AdvanceProcessingTime moves the job's processing time forward (it
	// starts at 0 in a job that scripts it) and fires the processing-time
	// timers and windows that fall due, in every task after the records
	// before it.
	AdvanceProcessingTime Duration `json:"advance_processing_time,omitzero"`
}

// TestRecord is a record of a test stream.
type TestRecord struct {
	Key       string `json:"key,omitempty"`
	Value     string `json:"value,omitempty"`
	Timestamp int64  `json:"timestamp,omitzero"`
}

// maxTestSteps bounds a test stream's script, which the job spec holds.
const maxTestSteps = 100000

func (v *validator) testStream(src string, s *Source) {
	if s.Watermark != nil {
		v.fail(src+".watermark", "a test_stream's watermarks are its watermark steps")
	}
	if s.Timestamp != nil {
		v.fail(src+".timestamp", "a test_stream's records carry their timestamps")
	}
	ts, p := s.TestStream, src+".test_stream"
	if len(ts.Steps) == 0 {
		v.fail(p+".steps", "required: at least one step")
	}
	if len(ts.Steps) > maxTestSteps {
		v.fail(p+".steps", "at most %d steps, got %d", maxTestSteps, len(ts.Steps))
	}
	last := int64(-1 << 63)
	for i, s := range ts.Steps {
		sp := fmt.Sprintf("%s.steps[%d]", p, i)
		switch countSet(s.Record != nil, s.Watermark != nil, s.AdvanceProcessingTime.Duration != 0) {
		case 0:
			v.fail(sp, "set record, watermark or advance_processing_time")
		case 1:
		default:
			v.fail(sp, "set only one of record, watermark and advance_processing_time")
		}
		if s.Watermark != nil {
			if *s.Watermark < last {
				v.fail(sp+".watermark", "goes back from %d to %d", last, *s.Watermark)
			}
			last = *s.Watermark
		}
		switch d := s.AdvanceProcessingTime.Duration; {
		case d < 0:
			v.fail(sp+".advance_processing_time", "must be positive, got %s", s.AdvanceProcessingTime)
		case d%time.Millisecond != 0:
			// Processing time is in milliseconds, as event time is.
			v.fail(sp+".advance_processing_time", "must be whole milliseconds, got %s", s.AdvanceProcessingTime)
		}
	}
}
