package wordrule_test

import (
	"fmt"

	"wasmstream.io/platform/internal/wordrule"
)

func ExampleWords() {
	words := wordrule.Words()
	fmt.Println(words[0], words[1], words[2])
	fmt.Println(wordrule.IsWord('é'), wordrule.IsWord('\u0301'), wordrule.IsWord('Ⅻ'))
	// Output:
	// {48 57} {65 90} {97 122}
	// true false false
}

func ExampleLowers() {
	for _, l := range wordrule.Lowers()[:3] {
		fmt.Printf("%U..%U %+d every %d\n", l.Lo, l.Hi, l.Delta, l.Stride)
	}
	// Output:
	// U+0041..U+005A +32 every 1
	// U+00C0..U+00D6 +32 every 1
	// U+00D8..U+00DE +32 every 1
}
