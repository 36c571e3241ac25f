package fsutil

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/specsim/specsim/internal/diag"
)

// ErrOutputIsInput is returned when an output path names one of the
// inputs; it is a usage error (diag.ErrUsage).
var ErrOutputIsInput = diag.New(diag.ErrUsage, "output is an input")

// CheckNotInput returns an error wrapping ErrOutputIsInput if out is the
// same file as any of inputs (by identity: the same device and inode), or
// if out is an existing directory holding one of them as the path itself.
// Inputs that do not exist are ignored; an out that does not exist yet
// cannot be an input.
func CheckNotInput(out string, inputs ...string) error {
	oi, err := os.Stat(out)
	if err != nil {
		return nil
	}
	for _, in := range inputs {
		ii, err := os.Stat(in)
		if err != nil {
			continue
		}
		if os.SameFile(oi, ii) {
			return fmt.Errorf("%w: %s is the input %s; write the output to another path", ErrOutputIsInput, out, in)
		}
	}
	return nil
}

// WriteFile writes the file at path atomically: write(w) fills a
// temporary file in path's directory, which is synced and renamed over
// path only if write returns nil. On any error the temporary file is
// removed and path is left as it was. The new file has mode 0644. A path
// that is not a regular file (a device, a FIFO, a directory, a lock) is
// refused with an error wrapping ErrNotRegular before anything is
// written; a symbolic link is written through (its target is replaced).
func WriteFile(path string, write func(w io.Writer) error) error {
	return writeFile(path, 0o644, write)
}

// WriteBytes writes b to path atomically, as WriteFile does, with mode
// perm.
func WriteBytes(path string, b []byte, perm os.FileMode) error {
	return writeFile(path, perm, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}

func writeFile(path string, perm os.FileMode, write func(w io.Writer) error) (err error) {
	if path, err = checkDest(path); err != nil {
		return err
	}
	f, err := createTemp(path)
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err = write(f); err != nil {
		return err
	}
	if err = f.Chmod(perm); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

// syncDir makes a rename in dir durable where the platform allows it.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return nil
	}
	defer d.Close()
	d.Sync() // not supported everywhere (e.g. some network filesystems); best effort
	return nil
}

// File is an output being written atomically (Create): writes go to a
// temporary file beside the destination; Commit syncs it and renames it
// over the destination, Abort removes it. Exactly one of them should be
// called; later calls do nothing.
type File struct {
	*os.File
	path string
	done bool
}

// Create starts an atomic write of path, for a writer that streams its
// output (WriteFile wants the whole content in one callback). A path that
// is not a regular file is refused as WriteFile refuses it.
func Create(path string) (*File, error) {
	path, err := checkDest(path)
	if err != nil {
		return nil, err
	}
	f, err := createTemp(path)
	if err != nil {
		return nil, err
	}
	return &File{File: f, path: path}, nil
}

// Commit makes the written content the file at the destination (mode
// 0644): sync, close, rename, and sync of the directory. On error the
// temporary file is removed and the destination left as it was.
func (f *File) Commit() (err error) {
	if f.done {
		return nil
	}
	f.done = true
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.File.Close()
			os.Remove(tmp)
		}
	}()
	if err = f.Chmod(0o644); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.File.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, f.path); err != nil {
		return err
	}
	return syncDir(filepath.Dir(f.path))
}

// Abort removes the temporary file, leaving the destination as it was.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.File.Close()
	os.Remove(f.Name())
}
