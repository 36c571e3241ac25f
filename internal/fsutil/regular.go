package fsutil

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"syscall"

	"github.com/specsim/specsim/internal/diag"
)

// ErrNotRegular is wrapped by the errors of CheckOutput, Open and the
// writers: an output or input that is not a regular file (a device such
// as /dev/null, a FIFO, a socket, a directory, /dev/stdout's pipe), or an
// output that is a run's own bookkeeping file (a lock). It is a usage
// error (diag.ErrUsage): outputs are regular files in a directory the
// user named, and inputs are regular files.
var ErrNotRegular = diag.New(diag.ErrUsage, "not a regular file")

// kindOf names what a file mode is, for errors.
func kindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeDevice != 0 && m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO (named pipe)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeIrregular != 0:
		return "an irregular file"
	}
	return "not a regular file"
}

// CheckOutput is what every command checks of an output file the user
// named before it computes anything: it is not one of inputs (by file
// identity, CheckNotInput), and it is a regular file or does not exist
// yet, in an existing directory — not a device, FIFO, socket, directory or
// lock file (ErrNotRegular). Errors are usage errors.
func CheckOutput(out string, inputs ...string) error {
	if out == "" {
		return nil
	}
	w, err := rootFor(out)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // its directory does not exist yet: nothing there to refuse
	}
	if err != nil {
		return err
	}
	defer w.done()
	if err := w.check(); err != nil {
		return err
	}
	return CheckNotInput(out, inputs...)
}

// CheckOutputDir checks an output directory the user named: it is a
// directory or does not exist yet (it will be created). Errors wrap
// ErrNotRegular.
func CheckOutputDir(dir string) error {
	st, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%w: the output directory %s is %s; give a directory (it is created if missing)", ErrNotRegular, dir, kindOf(st.Mode()))
	}
	return nil
}

// IsLockName reports whether a file name is one of the lock files Lock
// and LockDir create (".lock", ".lock-shard-0-of-2", …).
func IsLockName(name string) bool { return name == LockName || strings.HasPrefix(name, LockName+"-") }

// Open opens the input file at path for reading without blocking: a FIFO
// (which would block in open until a writer appears, deaf to Ctrl-C), a
// device, a socket or a directory is refused with an error wrapping
// ErrNotRegular; a regular file is returned in blocking mode, ready to
// read.
func Open(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%w: the input %s is %s; give a regular file", ErrNotRegular, path, kindOf(st.Mode()))
	}
	if err := setBlocking(f); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// ErrTooLarge is wrapped by ReadFile's error for a file above its limit;
// it is a usage error (diag.ErrUsage).
var ErrTooLarge = diag.New(diag.ErrUsage, "file too large")

// ReadFile reads the regular file at path (Open) whole, refusing one of
// more than max bytes before reading it (and reading at most max bytes,
// should it grow meanwhile).
func ReadFile(path string, max int64) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() > max {
		return nil, fmt.Errorf("%w: %s has %d bytes, more than the %d this input may have", ErrTooLarge, path, st.Size(), max)
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%w: %s grew past %d bytes while it was read", ErrTooLarge, path, max)
	}
	return b, nil
}

// IsIO reports whether err comes from the operating system's file or pipe
// I/O (a full disk, a quota, a read-only file system, EIO, a missing
// directory) rather than from content: such an error is an I/O failure
// (diag.ErrIO) whatever stage met it, never the user's configuration.
func IsIO(err error) bool {
	if err == nil {
		return false
	}
	var pe *fs.PathError
	var se *os.SyscallError
	var le *os.LinkError
	if errors.As(err, &pe) || errors.As(err, &se) || errors.As(err, &le) {
		return true
	}
	for _, e := range []error{syscall.ENOSPC, syscall.EDQUOT, syscall.EROFS, syscall.EIO, syscall.EFBIG} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
