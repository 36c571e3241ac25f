// Package fsutil holds the file-safety rules every specsim command follows:
//
//  1. an output is never one of the command's inputs (compared by file
//     identity, os.SameFile, not by name, so links and ./x vs x are caught);
//  2. every file is written to a temporary file in the destination's
//     directory, synced, and renamed over the destination only when the
//     whole content was written, so a crash, a full disk or SIGKILL leaves
//     the previous file (or none), never a truncated one; the temporary
//     file's name holds the writer's process id and host, and the next
//     write into the directory removes those of this host's processes
//     that are gone;
//  3. a run's output directory is locked for the run's duration, so two
//     runs cannot interleave their cells under one manifest;
//  4. outputs are regular files in directories the user named: a device
//     node, FIFO, socket, directory or lock file is never written or
//     replaced (CheckOutput, and every atomic write), and inputs are
//     opened without blocking, so a FIFO is refused instead of hanging
//     (Open, ReadFile, which also bounds an input's size);
//  5. a file name derived from input is checked and joined under its
//     directory (CheckName, Under).
package fsutil // import "github.com/specsim/specsim/internal/fsutil"
