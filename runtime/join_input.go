package runtime

// joinInputs tells a two-input task's join which input the batch it is
// processing came from. The task's gate concatenates the channels of the
// left edge and then those of the right edge, so channels below split are
// the left input's. The gate's watermark valves cover every channel, so the
// watermark a join sees is the minimum over both inputs.
type joinInputs struct {
	split int
	right bool
}

// from notes that the next batch comes from gate channel ch.
func (in *joinInputs) from(ch int) { in.right = ch >= in.split }
