package netx

import (
	"fmt"

	"wasmstream.io/platform/runtime/exchange"
)

// Link is one channel between processes: its address and its half in this
// process. A Sender's channel is a writer's (Edge.Channels(to)[from]),
// taken by no gate; a Receiver's is a channel of the consumer's gate.
type Link struct {
	Address Address
	Channel *exchange.InputChannel
}

// checkLinks validates links: sound addresses, each channel once.
func checkLinks(links []Link) error {
	if len(links) == 0 {
		return fmt.Errorf("netx: no channels")
	}
	seen := make(map[string]bool, len(links))
	for _, l := range links {
		if err := l.Address.validate(); err != nil {
			return err
		}
		if l.Channel == nil {
			return fmt.Errorf("netx: channel %s: no input channel", l.Address)
		}
		s := l.Address.Subject()
		if seen[s] {
			return fmt.Errorf("netx: channel %s listed twice", l.Address)
		}
		seen[s] = true
	}
	return nil
}
