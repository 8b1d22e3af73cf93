// Command triage is a UDF module that splits a stream with side outputs
// (Flink's ctx.output(tag, value)): orders with an integer "amount" below
// 900 go on, larger ones to the side output "large", and orders without a
// readable amount to "invalid". Its process function is in the
// cross-language conformance suite; the window process and join functions
// show side outputs from the other kinds that have them. Its README says
// more; build it with make.
package main

import (
	"bytes"
	"strconv"

	udf "wasmstream.io/platform/sdk/go"
)

// largeAmount is the amount from which an order is large.
const largeAmount = 900

func init() {
	udf.Process("triage", triage)
	udf.ProcessWindow("tally", tally)
	udf.Join("match", match)
}

// triage passes each order on, or sends it to "large" or "invalid", as it
// is: a side record keeps the key, timestamp and headers of its order.
func triage(ctx *udf.Context, key []byte, recs []udf.Record) error {
	for _, r := range recs {
		switch n, ok := amount(r.Value); {
		case !ok:
			ctx.Output("invalid", r)
		case n >= largeAmount:
			ctx.Output("large", r)
		default:
			ctx.Emit(r)
		}
	}
	return nil
}

// tally emits how many orders a window holds and sends each large one to
// "large", stamped with the window's end - 1.
func tally(key []byte, w udf.Window, recs []udf.Record, emit func(udf.Record)) error {
	for _, r := range recs {
		if n, ok := amount(r.Value); ok && n >= largeAmount {
			udf.SideOutput("large", udf.Record{Value: r.Value})
		}
	}
	emit(udf.Record{Value: strconv.AppendInt(nil, int64(len(recs)), 10)})
	return nil
}

// match joins an order (left) with a payment (right) as "order|payment",
// and sends the pair to "large" instead when the order is large.
func match(key []byte, w udf.Window, left, right udf.Record, emit func(udf.Record)) error {
	pair := append(append(append([]byte{}, left.Value...), '|'), right.Value...)
	if n, ok := amount(left.Value); ok && n >= largeAmount {
		udf.SideOutput("large", udf.Record{Value: pair})
		return nil
	}
	emit(udf.Record{Value: pair})
	return nil
}

// amountField precedes the amount in an order.
var amountField = []byte(`"amount":`)

// amount reads the 1 to 9 digits right after the first "amount": of v, the
// rule every language's module follows byte for byte.
func amount(v []byte) (int64, bool) {
	i := bytes.Index(v, amountField)
	if i < 0 {
		return 0, false
	}
	var n int64
	digits := 0
	for _, c := range v[i+len(amountField):] {
		if c < '0' || c > '9' || digits == 9 {
			break
		}
		n = n*10 + int64(c-'0')
		digits++
	}
	return n, digits > 0
}

func main() {}
