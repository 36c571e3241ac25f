package job

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// SignalContext is cancelled by SIGINT or SIGTERM (commands map the
// cancellation to ExitInterrupted, keeping finished work). While it is in
// use (until its cancel is called) the process's Watchdog leaves the
// command time to stop by itself.
func SignalContext(parent context.Context) (context.Context, context.CancelFunc) {
	if parent == nil {
		parent = context.Background()
	}
	return handled(signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM))
}
