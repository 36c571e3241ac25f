package cli

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/specsim/specsim/internal/job"
)

// progress adapts job.Progress to the lower-case names this package's
// commands call.
type progress struct{ *job.Progress }

func newProgress(w io.Writer, total int64, unit string) progress {
	return progress{job.NewProgress(w, "simulate", total, unit, 10*time.Second)}
}

func (p progress) update(done, total int64) { p.Update(done, total) }
func (p progress) finish()                  { p.Finish() }

// headed is a progress report whose header line (the command, its seed)
// is printed at the first update or by done, not before the library has
// validated the options: a refused command prints only its error line.
type headed struct {
	progress
	w      io.Writer
	header string
	once   sync.Once
}

func newHeaded(w io.Writer, header string, total int64, unit string) *headed {
	return &headed{progress: newProgress(w, total, unit), w: w, header: header}
}

func (h *headed) printHeader() { h.once.Do(func() { fmt.Fprintln(h.w, h.header) }) }

func (h *headed) update(done, total int64) {
	h.printHeader()
	h.progress.update(done, total)
}

// done ends the bar and prints the header if no update did, unless the
// run failed before computing anything (failed).
func (h *headed) done(failed bool) {
	h.finish()
	if !failed {
		h.printHeader()
	}
}
