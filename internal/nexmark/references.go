package nexmark

// References are the plain-Go queries by name ("q0", ...), for benchmarks:
// each runs over the events and returns its number of rows, which it does
// not sort (the exported queries sort theirs).
var References = map[string]func([]Event) int{
	"q0":  rows(q0),
	"q1":  rows(q1),
	"q2":  rows(q2),
	"q3":  rows(q3),
	"q4":  rows(q4),
	"q5":  func(e []Event) int { return len(q5With(e, WindowSize, WindowHop)) },
	"q7":  func(e []Event) int { return len(q7With(e, WindowSize)) },
	"q8":  func(e []Event) int { return len(q8With(e, WindowSize)) },
	"q9":  rows(q9),
	"q10": rows(q10),
	"q11": func(e []Event) int { return len(q11With(e, SessionGap)) },
	"q12": rows(q12),
	"q13": rows(q13),
	"q14": rows(q14),
	"q15": rows(q15),
	"q16": rows(q16),
	"q17": rows(q17),
	"q18": rows(q18),
	"q19": rows(q19),
	"q20": rows(q20),
	"q21": rows(q21),
	"q22": rows(q22),
}

func rows[R any](q func([]Event) []R) func([]Event) int {
	return func(e []Event) int { return len(q(e)) }
}
