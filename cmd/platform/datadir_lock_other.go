//go:build !(linux || darwin || dragonfly || freebsd || illumos || netbsd || openbsd)

package main

import "os"

// tryLock takes no lock on systems without flock(2): the lock file still
// gets the pid of the process using the directory, but nothing stops a
// second process from starting on the same data directory.
func tryLock(*os.File) error { return nil }
