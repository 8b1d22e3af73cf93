package connector

import (
	"errors"
	"testing"

	"github.com/nats-io/nats.go"
)

func TestParseAckSubject(t *testing.T) {
	tests := []struct {
		name  string
		reply string
		want  ackMeta
		ok    bool
	}{
		{"long form", "$JS.ACK.dom.ACCHASH.IN.cons.1.42.7.1764400000123456789.9.Xy12", ackMeta{seq: 42, nanos: 1764400000123456789, pending: 9}, true},
		{"long form, no domain", "$JS.ACK._.ACCHASH.IN.cons.3.5.5.17.0.r", ackMeta{seq: 5, nanos: 17, pending: 0}, true},
		{"long form, more tokens", "$JS.ACK._.H.IN.c.1.6.2.8.4.r.extra", ackMeta{seq: 6, nanos: 8, pending: 4}, true},
		{"short form", "$JS.ACK.IN.cons.1.300000.300000.1764400000000000000.0", ackMeta{seq: 300000, nanos: 1764400000000000000, pending: 0}, true},
		{"largest sequence", "$JS.ACK.IN.c.1.18446744073709551615.1.2.3", ackMeta{seq: 1<<64 - 1, nanos: 2, pending: 3}, true},
		{"not an ack subject", "_INBOX.abc.1", ackMeta{}, false},
		{"empty", "", ackMeta{}, false},
		{"too few tokens", "$JS.ACK.IN.cons.1.2.3.4", ackMeta{}, false},
		{"between the forms", "$JS.ACK.d.h.IN.cons.1.2.3.4", ackMeta{}, false},
		{"sequence not a number", "$JS.ACK.IN.cons.1.x2.3.4.5", ackMeta{}, false},
		{"empty sequence", "$JS.ACK.IN.cons.1..3.4.5", ackMeta{}, false},
		{"sequence overflows", "$JS.ACK.IN.cons.1.18446744073709551616.3.4.5", ackMeta{}, false},
		{"timestamp out of range", "$JS.ACK.IN.cons.1.2.3.9223372036854775808.5", ackMeta{}, false},
		{"negative pending", "$JS.ACK.IN.cons.1.2.3.4.-5", ackMeta{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseAckSubject(tt.reply)
			if !tt.ok {
				if !errors.Is(err, ErrNotAckSubject) {
					t.Fatalf("parseAckSubject(%q) = %+v, %v; want ErrNotAckSubject", tt.reply, got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("parseAckSubject(%q) = %+v, %v; want %+v", tt.reply, got, err, tt.want)
			}
		})
	}
}

// FuzzParseAckSubject: any subject parses without panicking, and one it
// accepts reads as the NATS client reads it.
func FuzzParseAckSubject(f *testing.F) {
	for _, seed := range []string{
		"$JS.ACK.dom.ACCHASH.IN.cons.1.42.7.1764400000123456789.9.Xy12",
		"$JS.ACK.IN.cons.1.300000.300000.1764400000000000000.0",
		"$JS.ACK.IN.cons.1.2.3.4",
		"$JS.ACK.IN.cons.1.x.3.4.5",
		"_INBOX.a",
	} {
		f.Add(seed)
	}
	sub := &nats.Subscription{}
	f.Fuzz(func(t *testing.T, reply string) {
		got, err := parseAckSubject(reply)
		if err != nil {
			return
		}
		meta, err := (&nats.Msg{Reply: reply, Sub: sub}).Metadata()
		if err != nil {
			t.Fatalf("parseAckSubject(%q) = %+v, the client refuses it: %v", reply, got, err)
		}
		if got.seq != meta.Sequence.Stream || got.nanos != meta.Timestamp.UnixNano() || got.pending != meta.NumPending {
			t.Fatalf("parseAckSubject(%q) = %+v, the client reads %+v", reply, got, meta)
		}
	})
}
