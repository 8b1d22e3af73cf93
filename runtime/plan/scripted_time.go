package plan

import (
	"fmt"

	"wasmstream.io/platform/runtime/spec"
)

// scriptedTimeProblems checks a job whose test stream moves processing
// time (advance_processing_time steps). Its tasks then run on a clock that
// travels in band from that source, each task moving once all its inputs
// have, which is exact only where every input of every task comes from
// that one script: so the job has no other source; its subtasks share one
// process (placement: spread would put the script's time on the network
// between workers it does not wait for, and is refused to keep that
// simple); and its checkpoints are aligned, since the in-flight records of
// an unaligned one would be restored before the clock they were read at.
func scriptedTimeProblems(j *spec.Job) []string {
	step := ""
	for i, s := range j.Sources {
		if s.TestStream == nil {
			continue
		}
		for k, st := range s.TestStream.Steps {
			if st.AdvanceProcessingTime.Duration != 0 {
				step = fmt.Sprintf("sources[%d].test_stream.steps[%d].advance_processing_time", i, k)
				break
			}
		}
		if step != "" {
			break
		}
	}
	if step == "" {
		return nil
	}
	var out []string
	if len(j.Sources) > 1 {
		out = append(out, fmt.Sprintf("sources: a job whose test stream moves processing time (%s) has that one source, got %d: "+
			"the other sources could not keep to the script's clock", step, len(j.Sources)))
	}
	if j.Placement == "spread" {
		out = append(out, fmt.Sprintf("placement: spread does not go with a test stream that moves processing time (%s): "+
			"a scripted job runs on one worker", step))
	}
	if j.Checkpoint != nil && j.Checkpoint.Unaligned {
		out = append(out, fmt.Sprintf("checkpoint.unaligned does not go with a test stream that moves processing time (%s): "+
			"restored in-flight records would miss the clock they were read at", step))
	}
	return out
}
