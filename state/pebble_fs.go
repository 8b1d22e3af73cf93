package state

import "github.com/cockroachdb/pebble/v2/vfs"

// noSyncFS is the file system of the Pebble backend: the operating
// system's, with every sync a no-op. The database is a working copy that
// Open clears and Close removes, and a failed subtask is restored from its
// checkpoint, never from these files (as the write-ahead log is off for the
// same reason), so waiting for them to reach the disk buys nothing. Pebble
// would otherwise sync each table it writes (fdatasync when finished, and
// sync_file_range every 512 KB on the way), and its manifest.
type noSyncFS struct{ vfs.FS }

func (fs noSyncFS) Create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	return withoutSync(fs.FS.Create(name, category))
}

func (fs noSyncFS) OpenReadWrite(name string, category vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	return withoutSync(fs.FS.OpenReadWrite(name, category, opts...))
}

func (fs noSyncFS) OpenDir(name string) (vfs.File, error) { return withoutSync(fs.FS.OpenDir(name)) }

func (fs noSyncFS) ReuseForWrite(oldname, newname string, category vfs.DiskWriteCategory) (vfs.File, error) {
	return withoutSync(fs.FS.ReuseForWrite(oldname, newname, category))
}

func (fs noSyncFS) Unwrap() vfs.FS { return fs.FS }

func withoutSync(f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return noSyncFile{f}, nil
}

// noSyncFile is a file whose syncs do nothing.
type noSyncFile struct{ vfs.File }

func (noSyncFile) Sync() error                             { return nil }
func (noSyncFile) SyncData() error                         { return nil }
func (noSyncFile) SyncTo(int64) (fullSync bool, err error) { return false, nil }
