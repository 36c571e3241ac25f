package job

import (
	"context"
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
	emit  func(string) // NewProgressFunc's line sink
	done  int64
	total int64
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
	p := &Progress{w: w, total: total, unit: unit, pre: prefix, every: every, start: time.Now(), last: time.Now()}
	if IsTerminal(w) && total > 0 {
		p.bar = progressbar.NewOptions64(total, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription(unit),
			progressbar.OptionShowCount(), progressbar.OptionSetPredictTime(true), progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish())
	}
	return p
}

// NewProgressFunc reports progress as lines "done/total UNIT, elapsed"
// passed to emit (at most every every, and at the end), never as a bar:
// for a log that prefixes its own lines.
func NewProgressFunc(emit func(line string), total int64, unit string, every time.Duration) *Progress {
	return &Progress{emit: emit, total: total, unit: unit, every: every, start: time.Now(), last: time.Now()}
}

// Heartbeat emits "done/total UNIT, elapsed, still computing" whenever
// nothing was reported for every, until ctx is done or stop is called: a
// long unit of work still shows in the log. It returns at once; stop ends
// the beat and waits for it, so no line follows stop.
func (p *Progress) Heartbeat(ctx context.Context, every time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				p.mu.Lock()
				if time.Since(p.last) >= every {
					p.last = time.Now()
					p.line(fmt.Sprintf("%d/%d %s, %.0fs, still computing", p.done, p.total, p.unit, time.Since(p.start).Seconds()))
				}
				p.mu.Unlock()
			}
		}
	}()
	return func() { cancel(); <-ended }
}

// line writes one progress line to emit or w.
func (p *Progress) line(s string) {
	if p.emit != nil {
		p.emit(s)
		return
	}
	fmt.Fprintf(p.w, "%s: %s\n", p.pre, s)
}

// Update reports done of total units; a line is printed when Every has
// passed since the last one or when done reaches total.
func (p *Progress) Update(done, total int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done, p.total = done, total
	if p.bar != nil {
		_ = p.bar.Set64(done)
		return
	}
	if time.Since(p.last) < p.every && done < total {
		return
	}
	p.last = time.Now()
	el := time.Since(p.start)
	if p.emit != nil {
		p.emit(fmt.Sprintf("%d/%d %s, %.1fs", done, total, p.unit, el.Seconds()))
		return
	}
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
