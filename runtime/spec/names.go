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

// isModuleName reports whether s is a module name: a lowercase letter or
// digit, then at most 62 lowercase letters, digits, '_' and '-'.
func isModuleName(s string) bool {
	if s == "" || len(s) > 63 {
		return false
	}
	for i, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || i > 0 && (c == '_' || c == '-')) {
			return false
		}
	}
	return true
}

// isModuleVersion reports whether s is a module version: a decimal number
// from 1 to 999999999 without leading zeros.
func isModuleVersion(s string) bool {
	if s == "" || len(s) > 9 || s[0] == '0' {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// isModuleRef reports whether s names an uploaded module: its id, a name
// (its latest version) or a name and version "name@2".
func isModuleRef(s string) bool {
	if isModuleID(s) {
		return true
	}
	name, version, versioned := strings.Cut(s, "@")
	return isModuleName(name) && (!versioned || isModuleVersion(version))
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
