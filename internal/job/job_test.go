package job

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

// Plain progress lines: every update when every = 0; the heartbeat speaks
// after a silence and never after stop.
func TestProgressLines(t *testing.T) {
	var mu sync.Mutex
	var lines []string
	emit := func(s string) { mu.Lock(); lines = append(lines, s); mu.Unlock() }
	p := NewProgressFunc(emit, 4, "cells", 0)
	p.Update(1, 4)
	p.Update(4, 4)
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "1/4 cells, ") || !strings.HasPrefix(lines[1], "4/4 cells, ") {
		t.Fatalf("lines %q", lines)
	}
	q := NewProgressFunc(emit, 4, "cells", time.Hour)
	q.Update(2, 4) // within the interval: no line
	stop := q.Heartbeat(context.Background(), 5*time.Millisecond)
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		n := len(lines)
		mu.Unlock()
		if n > 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	stop()
	mu.Lock()
	n := len(lines)
	got := lines[2:]
	mu.Unlock()
	if len(got) == 0 || got[0] != "2/4 cells, 0s, still computing" {
		t.Fatalf("heartbeat lines %q", got)
	}
	time.Sleep(20 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if len(lines) != n {
		t.Errorf("a line after stop: %q", lines[n:])
	}
}
