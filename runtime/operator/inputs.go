package operator

// Inputs tells a two-input task's join which input the batch it is
// processing came from. The task's gate concatenates the channels of the
// left edge and then those of the right edge, so channels below split are
// the left input's. The gate's watermark valves cover every channel, so the
// watermark a join sees is the minimum over both inputs.
type Inputs struct {
	Split int
	Right bool
}

// From notes that the next batch comes From gate channel ch.
func (in *Inputs) From(ch int) { in.Right = ch >= in.Split }
