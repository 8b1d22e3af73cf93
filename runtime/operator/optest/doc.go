// Package optest drives real operators in tests, as Flink's operator test
// harnesses do: records and watermarks written as text steps go into an
// operator's Stage, and a Tape collects what comes out, one line each.
// Modules come from udfs/, built with their real toolchains and compiled on
// a host shared by the test binary.
package optest
