package cli

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
)

// progress shows a bar with ETA when w is a terminal, and otherwise a
// plain line at most every 10 s (as in a batch job's log).
type progress struct {
	mu    sync.Mutex
	bar   *progressbar.ProgressBar
	w     io.Writer
	total int64
	unit  string
	last  time.Time
	start time.Time
}

func newProgress(w io.Writer, total int64, unit string) *progress {
	p := &progress{w: w, total: total, unit: unit, start: time.Now(), last: time.Now()}
	if isTerminal(w) {
		p.bar = progressbar.NewOptions64(total, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription(unit),
			progressbar.OptionShowCount(), progressbar.OptionSetPredictTime(true), progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish())
	}
	return p
}

func (p *progress) update(done, total int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		_ = p.bar.Set64(done)
		return
	}
	if time.Since(p.last) >= 10*time.Second {
		p.last = time.Now()
		el := time.Since(p.start)
		eta := time.Duration(float64(el) * float64(total-done) / float64(max(done, 1)))
		fmt.Fprintf(p.w, "simulate: %d/%d %s (%.0f%%), eta %s\n", done, total, p.unit, 100*float64(done)/float64(total), eta.Round(time.Second))
	}
}

func (p *progress) finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}
