package job

import (
	"errors"
	"fmt"
	"testing"
)

// A kind keeps the message, survives wrapping with %w, and the outermost
// kind wins.
func TestKinds(t *testing.T) {
	base := errors.New("cell 3: disk full")
	e := fmt.Errorf("experiment x: %w", IO(base))
	if !errors.Is(e, ErrIO) || errors.Is(e, ErrUsage) || !errors.Is(e, base) {
		t.Errorf("errors.Is on %v", e)
	}
	if e.Error() != "experiment x: cell 3: disk full" {
		t.Errorf("message %q", e.Error())
	}
	if Kind(e) != ErrIO || Kind(base) != nil {
		t.Errorf("Kind = %v, %v", Kind(e), Kind(base))
	}
	if k := Kind(Interrupted(Usage(base))); k != ErrInterrupted {
		t.Errorf("outer kind %v, want interrupted", k)
	}
	if !errors.Is(Violated(base), ErrViolated) {
		t.Error("Violated")
	}
}
