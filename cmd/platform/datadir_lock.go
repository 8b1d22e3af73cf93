package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
)

// lockFileName is the data directory's lock file. The platform process that
// runs on the directory holds a lock on it for as long as it runs and keeps
// its pid in it, so that a second process on the same directory (and its
// embedded NATS on the same JetStream store) refuses to start.
const lockFileName = "LOCK"

// errLocked is what tryLock returns when another process holds the lock.
var errLocked = errors.New("locked by another process")

// dataDirLock is a held lock on a data directory.
type dataDirLock struct {
	f *os.File
}

// dataDirInUseError says which process holds a data directory; pid is 0
// when the lock file does not name one (its holder has not written it yet).
type dataDirInUseError struct {
	dir string
	pid int
}

func (e *dataDirInUseError) Error() string {
	holder := "pid unknown"
	if e.pid > 0 {
		holder = "pid " + strconv.Itoa(e.pid)
	}
	return fmt.Sprintf("data_dir %s is in use by another platform process (%s); stop it or choose another data_dir", e.dir, holder)
}

// lockDataDir takes the lock of dir (which must exist) and writes this
// process's pid to its lock file. When another process holds it, the error
// is a *dataDirInUseError naming that process, and nothing is written. A
// lock file left by a process that was killed holds no lock: the kernel
// released it with the process.
func lockDataDir(dir string) (*dataDirLock, error) {
	path := filepath.Join(dir, lockFileName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("data_dir %s: lock: %w", dir, err)
	}
	if err := tryLock(f); err != nil {
		pid := lockHolder(f)
		f.Close()
		if errors.Is(err, errLocked) {
			return nil, &dataDirInUseError{dir: dir, pid: pid}
		}
		return nil, fmt.Errorf("data_dir %s: lock %s: %w", dir, path, err)
	}
	if err := writePid(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("data_dir %s: write %s: %w", dir, path, err)
	}
	return &dataDirLock{f: f}, nil
}

// writePid replaces what f holds with this process's pid.
func writePid(f *os.File) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	if _, err := f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0); err != nil {
		return err
	}
	return f.Sync()
}

// lockHolder is the pid a lock file holds, or 0.
func lockHolder(f *os.File) int {
	data, err := io.ReadAll(io.NewSectionReader(f, 0, 64))
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(data)))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

// release empties the lock file (a lock file with a pid in it is held, or
// was left by a killed process) and releases the lock; releasing it again
// does nothing. The file itself stays: removing it could let two processes
// lock two different files.
func (l *dataDirLock) release() error {
	if l == nil || l.f == nil {
		return nil
	}
	f := l.f
	l.f = nil
	terr := f.Truncate(0)
	cerr := f.Close()
	if err := errors.Join(terr, cerr); err != nil {
		return fmt.Errorf("data_dir lock: %w", err)
	}
	return nil
}
