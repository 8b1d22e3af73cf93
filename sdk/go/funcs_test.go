package udf

import (
	"bytes"
	"errors"
	"strconv"
)

// Functions the tests of this package run, registered once per test binary.
func init() {
	Map("test_upper", func(r Record) (Record, error) {
		for i, c := range r.Value {
			if 'a' <= c && c <= 'z' {
				r.Value[i] = c - 'a' + 'A'
			}
		}
		return r, nil
	})
	Map("test_set_all", func(r Record) (Record, error) {
		r.Key = []byte("k2")
		r.Timestamp = 7
		r.Headers = []Header{{Name: []byte("x"), Value: []byte("y")}}
		return r, nil
	})
	Map("test_fresh", func(r Record) (Record, error) {
		return Record{Value: r.Value}, nil
	})
	Map("test_mutate", func(r Record) (Record, error) {
		r.Key[0] = 'X'
		r.Headers[0].Value[0] = 'Y'
		return r, nil
	})
	Map("test_fail", func(r Record) (Record, error) {
		if string(r.Value) == "bad" {
			return r, errBadValue
		}
		return r, nil
	})
	Map("test_panic", func(r Record) (Record, error) {
		switch string(r.Value) {
		case "boom":
			panic("boom")
		case "index":
			_ = r.Value[len(r.Value)+5]
		}
		return r, nil
	})
	Filter("test_filter", func(r Record) (bool, error) {
		if string(r.Value) == "err" {
			return true, errors.New("cannot decide")
		}
		return bytes.HasPrefix(r.Value, []byte("a")), nil
	})
	FlatMap("test_fields", func(r Record, emit func(Record)) error {
		for f := range bytes.SplitSeq(r.Value, []byte(",")) {
			switch string(f) {
			case "!":
				return errors.New("bad field")
			case "?":
				panic("question")
			}
			r.Value = f
			emit(r)
		}
		return nil
	})
	FlatMap("test_keep_emit", func(r Record, emit func(Record)) error {
		strayEmit = emit
		return nil
	})
	Key("test_key", func(r Record) ([]byte, error) {
		if len(r.Value) == 0 {
			return nil, errors.New("empty value")
		}
		return r.Value[:1], nil
	})
	Timestamp("test_len_ts", func(r Record) (int64, error) {
		return int64(len(r.Value)), nil
	})
	Timestamp("test_ts", func(r Record) (int64, error) {
		return strconv.ParseInt(string(r.Value), 10, 64)
	})
}

// errBadValue is returned by test_fail, without allocating.
var errBadValue = errors.New("bad value")

// strayEmit is an emit function kept past its call, to check that using it
// fails.
var strayEmit func(Record)
