package job

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"
)

// handlers counts the contexts of SignalContext in use: a command that
// holds one stops by itself on SIGINT, keeping what it finished.
var handlers atomic.Int64

// Grace periods of Watchdog after the first SIGINT or SIGTERM: a command
// that listens (it holds a SignalContext) gets HandledGrace to stop by
// itself and print what it finished (milliseconds, as a rule; a step that
// does not look at its context, such as sorting 4M probabilities, is cut
// short), one that does not gets UnhandledGrace.
const (
	HandledGrace   = 2 * time.Second
	UnhandledGrace = 200 * time.Millisecond
)

// Watchdog makes every command of a process stop on SIGINT or SIGTERM
// with exit code code, whether or not it listens: after the first signal
// it waits UnhandledGrace when no SignalContext is in use (a command with
// no cancellation of its own: a conversion, a merge, a report build), or
// HandledGrace when one is (the command stops itself and reports what it
// finished; this is the safety net should it be slow to), or until a second
// signal, then writes "<name>: interrupted" to stderr and exits with
// code. Without it, such a command ignored Ctrl-C (the signal was caught
// for nothing) or was killed by it (exit 130, not the documented code).
// stop ends the watch, for a command that returned.
func Watchdog(stderr io.Writer, name string, code int) (stop func()) {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case <-sigs:
		case <-done:
			return
		}
		grace := UnhandledGrace
		if handlers.Load() > 0 {
			grace = HandledGrace
		}
		select {
		case <-done:
			return
		case <-sigs:
		case <-time.After(grace):
		}
		fmt.Fprintf(stderr, "%s: interrupted\n", name)
		os.Exit(code)
	}()
	return func() {
		signal.Stop(sigs)
		close(done)
	}
}

// handled wraps a SignalContext's cancel so that the context counts as a
// handler while in use.
func handled(ctx context.Context, cancel context.CancelFunc) (context.Context, context.CancelFunc) {
	handlers.Add(1)
	var once atomic.Bool
	return ctx, func() {
		if once.CompareAndSwap(false, true) {
			handlers.Add(-1)
		}
		cancel()
	}
}
