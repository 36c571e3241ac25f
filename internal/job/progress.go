package job

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// IsTerminal reports whether w is a terminal (progress bars go only there).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Progress reports the progress of total units of work to w: a bar with
// ETA when w is a terminal, and otherwise a line "PREFIX: done/total UNIT
// (…%), eta …" at most every Every (as in a batch job's log). It is safe
// for concurrent use.
type Progress struct {
	mu    sync.Mutex
	bar   *progressbar.ProgressBar
	w     io.Writer
	unit  string
	pre   string
	every time.Duration
	last  time.Time
	start time.Time
}

// NewProgress starts a progress report of total units named unit; lines
// start with prefix and come at most every every.
func NewProgress(w io.Writer, prefix string, total int64, unit string, every time.Duration) *Progress {
	p := &Progress{w: w, unit: unit, pre: prefix, every: every, start: time.Now(), last: time.Now()}
	if IsTerminal(w) && total > 0 {
		p.bar = progressbar.NewOptions64(total, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription(unit),
			progressbar.OptionShowCount(), progressbar.OptionSetPredictTime(true), progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish())
	}
	return p
}

// Update reports done of total units; a line is printed when Every has
// passed since the last one or when done reaches total.
func (p *Progress) Update(done, total int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		_ = p.bar.Set64(done)
		return
	}
	if time.Since(p.last) < p.every && done < total {
		return
	}
	p.last = time.Now()
	el := time.Since(p.start)
	eta := "?"
	if done > 0 {
		eta = time.Duration(float64(el) * float64(total-done) / float64(done)).Round(time.Second).String()
	}
	fmt.Fprintf(p.w, "%s: %s %d/%d %s (%.0f%%), elapsed %s, eta %s\n", p.pre, time.Now().Format("15:04:05"), done, total, p.unit,
		100*float64(done)/float64(max(total, 1)), el.Round(time.Second), eta)
}

// Finish ends the bar (a no-op for plain lines).
func (p *Progress) Finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}
