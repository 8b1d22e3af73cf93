// Command wordcount is a UDF module with one flat map function, split, which
// splits a record's UTF-8 text into lower-cased words. Build it with make.
package main

import (
	"unicode"
	"unicode/utf8"

	udf "wasmstream.io/platform/sdk/go"
)

func init() {
	udf.FlatMap("split", split)
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
