// Command attribution is a UDF module for click-to-impression attribution
// with an interval join: the join pairs each ad impression with the clicks
// of the same user that follow it within a few seconds, and credit turns
// each pair of the same ad into an attribution record. Its README says more;
// build it with make.
package main

import (
	"encoding/json"
	"fmt"

	udf "wasmstream.io/platform/sdk/go"
)

func init() {
	udf.FlatMap("credit", credit)
}

// event is an impression or a click.
type event struct {
	User string `json:"user"`
	Ad   int64  `json:"ad"`
	TS   int64  `json:"ts"`
}

// pair is the built-in output of the join: the impression on the left, the
// click on the right.
type pair struct {
	Left  event `json:"left"`
	Right event `json:"right"`
}

// out is the buffer results are built in; emit copies them.
var out []byte

// credit emits {"user": "...", "ad": n, "impression_ts": ms, "click_ts": ms,
// "delay_ms": ms} for an impression and a later click of the same ad, and
// nothing for a click on another ad.
func credit(r udf.Record, emit func(udf.Record)) error {
	var p pair
	if err := json.Unmarshal(r.Value, &p); err != nil {
		return fmt.Errorf("credit: %w", err)
	}
	imp, click := p.Left, p.Right
	if imp.Ad != click.Ad {
		return nil
	}
	out = fmt.Appendf(out[:0], `{"user":%q,"ad":%d,"impression_ts":%d,"click_ts":%d,"delay_ms":%d}`,
		imp.User, imp.Ad, imp.TS, click.TS, click.TS-imp.TS)
	emit(udf.Record{Key: r.Key, Value: out, Timestamp: r.Timestamp})
	return nil
}

func main() {}
