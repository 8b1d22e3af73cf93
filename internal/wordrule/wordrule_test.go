package wordrule

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"unicode"
)

var update = flag.Bool("update", false, "rewrite the table files")

// lookup is what every language's module does with the tables ws and ls: a
// binary search of the word ranges and the lower-case runs.
func lookup(ws []Range, ls []Lower, r rune) (word bool, lower rune) {
	i := sort.Search(len(ws), func(i int) bool { return ws[i].Hi >= r })
	if i == len(ws) || ws[i].Lo > r {
		return false, r
	}
	j := sort.Search(len(ls), func(j int) bool { return ls[j].Hi >= r })
	if j < len(ls) && ls[j].Lo <= r && (r-ls[j].Lo)%ls[j].Stride == 0 {
		return true, r + ls[j].Delta
	}
	return true, r
}

func TestTablesMatchUnicode(t *testing.T) {
	ws, ls := Words(), Lowers()
	for r := rune(0); r <= unicode.MaxRune; r++ {
		word, lower := lookup(ws, ls, r)
		if word != IsWord(r) {
			t.Fatalf("%U: word %v, want %v", r, word, IsWord(r))
		}
		if word && lower != unicode.ToLower(r) {
			t.Fatalf("%U: lower %U, want %U", r, lower, unicode.ToLower(r))
		}
	}
}

func TestFilesAreUpToDate(t *testing.T) {
	for _, f := range Files {
		path := filepath.Join("..", "..", filepath.FromSlash(f.Path))
		want := f.Render()
		if *update {
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is out of date: go test ./internal/wordrule -update", f.Path)
		}
	}
}
