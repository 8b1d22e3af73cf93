package exchange

// Edge connects the producer subtasks of one operator to the consumer
// subtasks of the next: one Writer per producer and one InputChannel per
// producer and consumer.
type Edge struct {
	writers []*Writer
	// channels[c][p] connects producer p to consumer c.
	channels [][]*InputChannel
}

// NewEdge makes an edge from producers to consumers subtasks. Zero fields of
// cfg take their defaults; negative sizes panic.
func NewEdge(cfg Config, producers, consumers int) *Edge {
	cfg = cfg.withDefaults(consumers)
	e := &Edge{writers: make([]*Writer, producers), channels: make([][]*InputChannel, consumers)}
	for c := range e.channels {
		e.channels[c] = make([]*InputChannel, producers)
		for p := range e.channels[c] {
			e.channels[c][p] = &InputChannel{exclusive: cfg.ExclusivePerChannel, credits: cfg.ExclusivePerChannel}
		}
	}
	for p := range e.writers {
		out := make([]*InputChannel, consumers)
		for c := range out {
			out[c] = e.channels[c][p]
		}
		e.writers[p] = newWriter(cfg, out)
	}
	return e
}

// Writer is producer's writer; channel c of it goes to consumer c.
func (e *Edge) Writer(producer int) *Writer { return e.writers[producer] }

// Channels are consumer's input channels of the edge, indexed by producer;
// they go to the consumer's NewGate.
func (e *Edge) Channels(consumer int) []*InputChannel { return e.channels[consumer] }
