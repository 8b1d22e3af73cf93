package replay

import "bytes"

// diff compares the outputs the two versions made in the step just run (an
// input or a watermark) and reports one diff event per output: outputs
// answering the same input or timer are paired in order; a pair with the
// same key, value, timestamp and headers is the same, otherwise changed;
// an output without a partner is only in its version. Nothing is kept
// past the step, so a replay's memory does not grow with its length.
func (r *run) diff() error {
	if len(r.versions) != 2 {
		return nil
	}
	old, new := r.versions[0], r.versions[1]
	defer func() { old.outputs, new.outputs = old.outputs[:0], new.outputs[:0] }()
	var causes []string
	seen := map[string]bool{}
	for _, outs := range [][]Event{old.outputs, new.outputs} {
		for _, e := range outs {
			if !seen[e.Answers] {
				seen[e.Answers] = true
				causes = append(causes, e.Answers)
			}
		}
	}
	for _, c := range causes {
		a, b := answering(old.outputs, c), answering(new.outputs, c)
		for i := 0; i < max(len(a), len(b)); i++ {
			d := Event{Event: EventDiff, Answers: c}
			switch {
			case i >= len(b):
				d.Verdict, d.Old = OnlyInOld, strip(a[i])
			case i >= len(a):
				d.Verdict, d.New = OnlyInNew, strip(b[i])
			case sameOutput(&a[i], &b[i]):
				d.Verdict, d.Old = Same, strip(a[i])
			default:
				d.Verdict, d.Old, d.New = Changed, strip(a[i]), strip(b[i])
			}
			if err := r.report(d); err != nil {
				return err
			}
		}
	}
	return nil
}

// answering are the outputs that answer cause, in order.
func answering(outs []Event, cause string) []Event {
	var out []Event
	for _, e := range outs {
		if e.Answers == cause {
			out = append(out, e)
		}
	}
	return out
}

// strip is an output as a diff shows it: its record alone.
func strip(e Event) *Event {
	return &Event{Event: EventOutput, Key: e.Key, Value: e.Value, Timestamp: e.Timestamp, Headers: e.Headers}
}

// sameOutput reports whether two outputs are the same record, byte for
// byte.
func sameOutput(a, b *Event) bool {
	if !bytes.Equal(a.Key, b.Key) || !bytes.Equal(a.Value, b.Value) || *a.Timestamp != *b.Timestamp || len(a.Headers) != len(b.Headers) {
		return false
	}
	for i := range a.Headers {
		if a.Headers[i].Name != b.Headers[i].Name || !bytes.Equal(a.Headers[i].Value, b.Headers[i].Value) {
			return false
		}
	}
	return true
}
