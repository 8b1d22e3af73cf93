// Command fraud-v2 is a second version of the fraud module (udfs/fraud) with
// other thresholds and a severity on very large alerts: what replaying a
// key with another module compares against the recorded one. Its README
// says more; build it with make.
package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strconv"

	udf "wasmstream.io/platform/sdk/go"
)

// Thresholds: a small transaction is below 2.00 (1.00 in version 1), a
// large one above 750.00 (500.00), and above 5000.00 an alert says its
// severity is high.
const (
	smallAmount = 2.00
	largeAmount = 750.00
	highAmount  = 5000.00
	window      = 60_000 // milliseconds
)

// small holds, while an account's last transaction was small, the end of
// the minute in which a large one raises an alert (milliseconds).
var small = udf.ValueState("small")

func init() {
	udf.Process("detect", detect)
	udf.OnTimer("expire", expire)
}

// detect checks an account's transactions in order.
func detect(ctx *udf.Context, account []byte, txns []udf.Record) error {
	for _, t := range txns {
		amount, err := numberField(t.Value, "amount")
		if err != nil {
			return err
		}
		if v, ok := small.Get(ctx); ok {
			deadline := int64(binary.LittleEndian.Uint64(v))
			if amount > largeAmount && t.Timestamp <= deadline {
				ctx.Emit(udf.Record{Key: account, Value: alert(account, t.Timestamp, amount), Timestamp: t.Timestamp})
			}
			ctx.DeleteEventTimer(deadline)
			small.Clear(ctx)
		}
		if amount < smallAmount {
			deadline := t.Timestamp + window
			small.Set(ctx, binary.LittleEndian.AppendUint64(nil, uint64(deadline)))
			ctx.RegisterEventTimer(deadline)
		}
	}
	return nil
}

// expire forgets a small transaction a minute after it.
func expire(ctx *udf.Context, account []byte, t udf.Timer) error {
	small.Clear(ctx)
	return nil
}

// alert is the JSON of an alert.
func alert(account []byte, ts int64, amount float64) []byte {
	b := append([]byte(`{"account":`), strconv.Quote(string(account))...)
	b = append(b, `,"ts":`...)
	b = strconv.AppendInt(b, ts, 10)
	b = append(b, `,"amount":`...)
	b = strconv.AppendFloat(b, amount, 'f', 2, 64)
	if amount > highAmount {
		b = append(b, `,"severity":"high"`...)
	}
	return append(b, '}')
}

var errNoAmount = errors.New(`no number field "amount"`)

// numberField reads a top-level JSON number field of an object, without
// decoding the rest (encoding/json would add 400 KB to the module).
func numberField(value []byte, name string) (float64, error) {
	key := []byte(`"` + name + `"`)
	i := bytes.Index(value, key)
	if i < 0 {
		return 0, errNoAmount
	}
	rest := bytes.TrimLeft(value[i+len(key):], " \t\r\n")
	if len(rest) == 0 || rest[0] != ':' {
		return 0, errNoAmount
	}
	rest = bytes.TrimLeft(rest[1:], " \t\r\n")
	end := 0
	for end < len(rest) && bytes.IndexByte([]byte("+-.0123456789eE"), rest[end]) >= 0 {
		end++
	}
	f, err := strconv.ParseFloat(string(rest[:end]), 64)
	if err != nil {
		return 0, errNoAmount
	}
	return f, nil
}

func main() {}
