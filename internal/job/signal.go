package job

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// SignalContext is cancelled by SIGINT or SIGTERM (commands map the
// cancellation to ExitInterrupted, keeping finished work).
func SignalContext(parent context.Context) (context.Context, context.CancelFunc) {
	if parent == nil {
		parent = context.Background()
	}
	return signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
}
