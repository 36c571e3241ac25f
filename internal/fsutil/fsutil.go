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
// that is not a regular file (a device, a FIFO, a directory, a lock, a
// link to one of them) is refused with an error wrapping ErrNotRegular
// before anything is written. Every write goes through an os.Root (the
// output directory's, Confine, else path's own directory): a symbolic
// link at path is replaced by the new file, never written through, and
// a link on the way that leads out of a confined directory is refused
// (ErrEscapes).
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
	f, err := create(path, perm)
	if err != nil {
		return err
	}
	defer f.Abort()
	if err = write(f); err != nil {
		return err
	}
	return f.Commit()
}

// File is an output being written atomically (Create): writes go to a
// temporary file beside the destination, owned by an advisory lock held
// until Commit or Abort (so no cleanup removes it meanwhile, RemoveStale);
// Commit syncs it and renames it over the destination, Abort removes it.
// Exactly one of them should be called; later calls do nothing.
type File struct {
	*os.File
	w    rooted
	tmp  string // relative to w.root
	perm os.FileMode
	done bool
}

// Create starts an atomic write of path, for a writer that streams its
// output (WriteFile wants the whole content in one callback). A path that
// is not a regular file is refused as WriteFile refuses it.
func Create(path string) (*File, error) { return create(path, 0o644) }

func create(path string, perm os.FileMode) (*File, error) {
	w, err := rootFor(path)
	if err != nil {
		return nil, err
	}
	if err := w.check(); err != nil {
		w.done()
		return nil, err
	}
	f, tmp, err := createTemp(w)
	if err != nil {
		w.done()
		return nil, err
	}
	return &File{File: f, w: w, tmp: tmp, perm: perm}, nil
}

// Commit makes the written content the file at the destination: sync,
// rename within the root (replacing a link at that name, not following
// it), sync of the directory, and release of the temporary file's lock.
// On error the temporary file is removed and the destination left as it
// was.
func (f *File) Commit() (err error) {
	if f.done {
		return nil
	}
	defer func() {
		if err != nil {
			f.Abort()
		}
	}()
	if err = f.Chmod(f.perm); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.w.root.Rename(f.tmp, f.w.rel); err != nil {
		return f.w.escaped(err)
	}
	f.done = true
	defer f.w.done()
	if err = f.File.Close(); err != nil {
		return err
	}
	if d, err := f.w.root.Open(filepath.Dir(f.w.rel)); err == nil {
		d.Sync() // not supported everywhere (e.g. some network filesystems); best effort
		d.Close()
	}
	return nil
}

// Abort removes the temporary file, leaving the destination as it was.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.w.root.Remove(f.tmp) // removed while still locked: no cleanup races it
	f.File.Close()
	f.w.done()
}
