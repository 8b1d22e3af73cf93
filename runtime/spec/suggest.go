package spec

import "fmt"

// didYouMean is " (did you mean "x"?)" for the name among names closest to
// word, or "" when none is close enough to be a likely typo.
func didYouMean(word string, names []string) string {
	if s := closest(word, names); s != "" {
		return fmt.Sprintf(" (did you mean %q?)", s)
	}
	return ""
}

// closest is the name among names with the least edit distance to word,
// the first of them on a tie, when that distance is small for word's length:
// at most 1 for words up to 5 characters, 2 up to 8, 3 beyond. Otherwise "".
func closest(word string, names []string) string {
	limit := 1
	switch n := len([]rune(word)); {
	case n == 0:
		return ""
	case n > 8:
		limit = 3
	case n > 5:
		limit = 2
	}
	best, bestDist := "", limit+1
	for _, name := range names {
		if name == word {
			continue
		}
		if d := editDistance(word, name); d < bestDist {
			best, bestDist = name, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance of a and b: the
// fewest insertions, deletions, substitutions and swaps of two adjacent
// characters that turn a into b (Levenshtein's distance with swaps).
func editDistance(a, b string) int {
	s, t := []rune(a), []rune(b)
	// d[i][j] is the distance of s[:i] and t[:j].
	d := make([][]int, len(s)+1)
	for i := range d {
		d[i] = make([]int, len(t)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(s); i++ {
		for j := 1; j <= len(t); j++ {
			cost := 1
			if s[i-1] == t[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && s[i-1] == t[j-2] && s[i-2] == t[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(s)][len(t)]
}
