package spec

import (
	"strings"
	"unicode"
)

// isIdentifier reports whether s is a safe name: letters, digits, '-', '_'
// and '.'.
func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// isModuleID reports whether s is a module id: "sha256:" and 64 lowercase
// hex digits.
func isModuleID(s string) bool {
	hex, ok := strings.CutPrefix(s, "sha256:")
	if !ok || len(hex) != 64 {
		return false
	}
	for _, c := range hex {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// streamProblem says what is wrong with a JetStream stream name, or "".
func streamProblem(s string) string {
	switch {
	case s == "":
		return "required"
	case strings.ContainsAny(s, ".*>/\\") || hasSpaceOrControl(s):
		return "a stream name has no spaces, '.', '*', '>', '/' or '\\'"
	}
	return ""
}

// subjectProblem says what is wrong with a NATS subject, or "". Wildcards
// ('*' as a token, '>' as the last one) are allowed only when wild is set.
func subjectProblem(s string, wild bool) string {
	if s == "" {
		return "required"
	}
	if hasSpaceOrControl(s) {
		return "a subject has no spaces"
	}
	tokens := strings.Split(s, ".")
	for i, t := range tokens {
		switch {
		case t == "":
			return "a subject has no empty tokens"
		case (t == "*" || t == ">") && !wild:
			return "must not contain wildcards"
		case t == ">" && i != len(tokens)-1:
			return "'>' must be the last token"
		}
	}
	return ""
}

func hasSpaceOrControl(s string) bool {
	for _, c := range s {
		if unicode.IsSpace(c) || unicode.IsControl(c) {
			return true
		}
	}
	return false
}
