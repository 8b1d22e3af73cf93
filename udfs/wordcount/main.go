// Command wordcount is a UDF module that counts words: split, a flat map
// function, splits a record's UTF-8 text into lower-cased words; word, a key
// function, keys a record by its value; count, a window process function,
// emits each word with the number of times it came in the window. Build it
// with make.
package main

import (
	"strconv"
	"unicode"
	"unicode/utf8"

	udf "wasmstream.io/platform/sdk/go"
)

func init() {
	udf.FlatMap("split", split)
	udf.Key("word", keyWord)
	udf.ProcessWindow("count", count)
}

// keyWord (the function word) keys a record by its value: the word split
// emitted.
func keyWord(r udf.Record) ([]byte, error) { return r.Value, nil }

// count emits one record for the window of a word: the key is the word, the
// value the number of records in the window in decimal, the timestamp the
// window's last millisecond.
func count(key []byte, w udf.Window, recs []udf.Record, emit func(udf.Record)) error {
	emit(udf.Record{Key: key, Value: strconv.AppendInt(nil, int64(len(recs)), 10), Timestamp: w.End - 1})
	return nil
}

// word holds the word being built; emit copies it, so one buffer serves every
// word.
var word []byte

// split emits one record per word of the value: a word is a maximal run of
// letters and digits (unicode.IsLetter, unicode.IsDigit), lower-cased with
// unicode.ToLower. The key and the value are the word; the timestamp and
// headers are the input's. Bytes that are not valid UTF-8 decode as U+FFFD,
// which is neither, so they separate words.
func split(r udf.Record, emit func(udf.Record)) error {
	text := r.Value
	word = word[:0]
	for len(text) > 0 {
		c, size := utf8.DecodeRune(text)
		text = text[size:]
		if unicode.IsLetter(c) || unicode.IsDigit(c) {
			word = utf8.AppendRune(word, unicode.ToLower(c))
			continue
		}
		emitWord(r, emit)
	}
	emitWord(r, emit)
	return nil
}

func emitWord(r udf.Record, emit func(udf.Record)) {
	if len(word) == 0 {
		return
	}
	r.Key, r.Value = word, word
	emit(r)
	word = word[:0]
}

// main never runs: the module is a reactor, and the host calls _initialize,
// which runs init.
func main() {}
