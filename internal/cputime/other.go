//go:build !unix

package cputime

func process() int64 { return 0 }

func peakRSS() int64 { return 0 }
