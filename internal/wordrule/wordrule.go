// Package wordrule is the word rule of the wordcount UDFs as data. The Go
// module udfs/wordcount splits text into words with Go's unicode package; its
// Rust, C, AssemblyScript and WebAssembly-text twins compile in the tables
// this package renders from the same package, so that every language splits
// every input into exactly the same words (udfs/wordcount/README.md states
// the rule).
//
// A word is a maximal run of code points that are letters (unicode.IsLetter)
// or decimal digits (unicode.IsDigit), each lower-cased with unicode.ToLower.
// Words lists those code points as ranges; Lowers lists the lower-case
// mapping of the word code points that have one, as runs.
package wordrule

import (
	"unicode"
)

// Range is the code points Lo through Hi, inclusive.
type Range struct {
	Lo, Hi rune
}

// Lower maps the code points Lo, Lo+Stride, ... up to Hi to themselves plus
// Delta; the code points between them are unchanged.
type Lower struct {
	Lo, Hi rune
	Delta  rune
	Stride rune
}

// IsWord reports whether r belongs in a word.
func IsWord(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// Words is the ranges of the code points that belong in words, in order.
func Words() []Range {
	var rs []Range
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if !IsWord(r) {
			continue
		}
		if n := len(rs); n > 0 && rs[n-1].Hi == r-1 {
			rs[n-1].Hi = r
			continue
		}
		rs = append(rs, Range{r, r})
	}
	return rs
}

// Lowers is the lower-case mapping of the word code points that
// unicode.ToLower changes, as runs of one delta and a stride of 1 or 2, in
// order.
func Lowers() []Lower {
	var ls []Lower
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if !IsWord(r) || unicode.ToLower(r) == r {
			continue
		}
		d := unicode.ToLower(r) - r
		if n := len(ls); n > 0 {
			last := &ls[n-1]
			gap := r - last.Hi
			if last.Delta == d && (gap == 1 || gap == 2) && (last.Lo == last.Hi || gap == last.Stride) {
				last.Hi, last.Stride = r, gap
				continue
			}
		}
		ls = append(ls, Lower{Lo: r, Hi: r, Delta: d, Stride: 1})
	}
	return ls
}
