package cli

import (
	"io"
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
