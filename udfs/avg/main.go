// Command avg is a UDF module with window functions over JSON records that
// carry a number field "amount": an incremental average (aggregate), the
// record with the largest amount (reduce), and a count of records
// (aggregate, the Wasm twin of the built-in count). Its README says more;
// build it with make.
package main

import (
	"encoding/binary"
	"errors"
	"math"
	"strconv"

	udf "wasmstream.io/platform/sdk/go"
)

func init() {
	udf.AggregateOf("avg", meanCodec{}, udf.TypedAggregate[mean]{
		Create: func(m *mean) { *m = mean{} },
		Add:    addAmount,
		Merge: func(m, other *mean) error {
			m.count += other.count
			m.sum += other.sum
			return nil
		},
		Result: result,
	})
	udf.Reduce("largest", largest)
	udf.AggregateOf("count", countCodec{}, udf.TypedAggregate[int64]{
		Create: func(n *int64) { *n = 0 },
		Add: func(n *int64, _ udf.Record) error {
			*n++
			return nil
		},
		Merge: func(n, other *int64) error {
			*n += *other
			return nil
		},
		Result: func(_ []byte, _ udf.Window, n *int64) ([]byte, error) {
			out = strconv.AppendInt(out[:0], *n, 10)
			return out, nil
		},
	})
}

// countCodec stores a count in 8 bytes.
type countCodec struct{}

func (countCodec) Append(dst []byte, n *int64) []byte {
	return binary.LittleEndian.AppendUint64(dst, uint64(*n))
}

func (countCodec) Decode(b []byte, n *int64) error {
	if len(b) != 8 {
		return errors.New("count: accumulator is not 8 bytes")
	}
	*n = int64(binary.LittleEndian.Uint64(b))
	return nil
}

// mean is the accumulator of avg: how many amounts and their sum.
type mean struct {
	count int64
	sum   float64
}

// meanCodec stores a mean in 16 bytes: the count, then the sum's bits.
type meanCodec struct{}

func (meanCodec) Append(dst []byte, m *mean) []byte {
	dst = binary.LittleEndian.AppendUint64(dst, uint64(m.count))
	return binary.LittleEndian.AppendUint64(dst, math.Float64bits(m.sum))
}

func (meanCodec) Decode(b []byte, m *mean) error {
	if len(b) != 16 {
		return errors.New("avg: accumulator is not 16 bytes")
	}
	m.count = int64(binary.LittleEndian.Uint64(b))
	m.sum = math.Float64frombits(binary.LittleEndian.Uint64(b[8:]))
	return nil
}

func addAmount(m *mean, r udf.Record) error {
	v, err := amount(r.Value)
	if err != nil {
		return err
	}
	m.count++
	m.sum += v
	return nil
}

// out holds the last result: the SDK copies a result as soon as it is
// returned, so one buffer serves every window.
var out []byte

// result is {"key":"...","window_start":S,"window_end":E,"avg":A,"count":N}.
func result(key []byte, w udf.Window, m *mean) ([]byte, error) {
	b := append(out[:0], `{"key":`...)
	b = appendJSONString(b, key)
	b = append(b, `,"window_start":`...)
	b = strconv.AppendInt(b, w.Start, 10)
	b = append(b, `,"window_end":`...)
	b = strconv.AppendInt(b, w.End, 10)
	b = append(b, `,"avg":`...)
	b = strconv.AppendFloat(b, m.sum/float64(m.count), 'f', -1, 64)
	b = append(b, `,"count":`...)
	b = strconv.AppendInt(b, m.count, 10)
	out = append(b, '}')
	return out, nil
}

// largest keeps the record value with the larger amount (the earlier one on
// a tie).
func largest(acc, value []byte) ([]byte, error) {
	a, err := amount(acc)
	if err != nil {
		return nil, err
	}
	v, err := amount(value)
	if err != nil {
		return nil, err
	}
	if v > a {
		return value, nil
	}
	return acc, nil
}

func main() {}
