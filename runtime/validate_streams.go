package runtime

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/connector"
	"wasmstream.io/platform/runtime/exec"
	"wasmstream.io/platform/runtime/plan"
)

// checkSourceRetention refuses a JetStream source whose stream cannot be
// read again from a position: one with interest or work-queue retention
// removes messages once they are consumed, so a restart from a checkpoint
// (or from the start, without checkpoints) would silently miss them.
func (m *Manager) checkSourceRetention(ctx context.Context, p *plan.Plan) error {
	if m.cfg.JetStream == nil {
		return nil
	}
	for i, s := range p.Job.Sources {
		if s.JetStream == nil {
			continue
		}
		path := fmt.Sprintf("sources[%d].jetstream.stream", i)
		l, err := connector.StreamLimitsOf(ctx, m.cfg.JetStream, s.JetStream.Stream)
		if err != nil {
			return missingStream(path, s.JetStream.Stream, s.JetStream.Subjects, err)
		}
		if l.Replayable() {
			continue
		}
		removes := "once every consumer interested in them has acknowledged them, or at once when none is"
		if l.Retention == jetstream.WorkQueuePolicy {
			removes = "once a consumer acknowledges them"
		}
		return fmt.Errorf("%w: %s: stream %q has %s retention, which removes messages %s, so a restart could not read them again: "+
			"read from a stream with limits retention (JetStream's default) instead", ErrInvalidJob, path, l.Stream, retentionName(l.Retention), removes)
	}
	return nil
}

func retentionName(r jetstream.RetentionPolicy) string {
	switch r {
	case jetstream.InterestPolicy:
		return "interest"
	case jetstream.WorkQueuePolicy:
		return "work-queue"
	}
	return "limits"
}

// streamWarnings says which streams of the job's sinks and dead letters
// can drop what the job writes: a stream that refuses messages when full
// (discard new) fails the writes, one that removes its oldest beyond a
// count or size loses them, and one whose max_age is shorter than a
// recovery may take loses output before a recovery could read it back.
func (m *Manager) streamWarnings(ctx context.Context, p *plan.Plan) []string {
	if m.cfg.JetStream == nil {
		return nil
	}
	bound := exec.NewRestartPolicy(p.Job.Restart).LongestDelay()
	var out []string
	warn := func(path, subject string) {
		l, err := connector.SubjectStreamLimits(ctx, m.cfg.JetStream, subject)
		if err != nil {
			return
		}
		if w := dropWarning(l, bound); w != "" {
			out = append(out, path+": "+w)
		}
	}
	for i, s := range p.Job.Sinks {
		if s.JetStream != nil {
			warn(fmt.Sprintf("sinks[%d]", i), s.JetStream.Subject)
		}
	}
	if p.Job.DeadLetter != "" {
		warn("dead_letter_subject", p.Job.DeadLetter)
	}
	return out
}

// dropWarning is the warning for a stream with limits l that a job whose
// restart waits up to bound writes to, or "" when it drops nothing.
func dropWarning(l connector.StreamLimits, bound time.Duration) string {
	var limits []string
	for _, x := range []struct {
		name string
		n    int64
	}{{"max_msgs", l.MaxMsgs}, {"max_bytes", l.MaxBytes}, {"max_msgs_per_subject", l.MaxMsgsPerSubject}} {
		if x.n > 0 {
			limits = append(limits, fmt.Sprintf("%s %d", x.name, x.n))
		}
	}
	var reasons []string
	switch {
	case len(limits) > 0 && l.Discard == jetstream.DiscardNew:
		reasons = append(reasons, fmt.Sprintf("it refuses new messages once full (discard new at %s), which fails the writes and restarts the job until there is room",
			strings.Join(limits, ", ")))
	case len(limits) > 0:
		reasons = append(reasons, fmt.Sprintf("it removes its oldest messages beyond %s", strings.Join(limits, ", ")))
	}
	if need := bound + time.Minute; l.MaxAge > 0 && l.MaxAge < need {
		reasons = append(reasons, fmt.Sprintf("it removes messages after max_age %s, less than a recovery may take (restart delay up to %s plus a minute to restore)",
			l.MaxAge, bound))
	}
	if len(reasons) == 0 {
		return ""
	}
	return fmt.Sprintf("stream %s can drop what the job writes: %s; raise or remove these limits so that nothing is dropped",
		l.Stream, strings.Join(reasons, "; "))
}
