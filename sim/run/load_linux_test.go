package run

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestLoadAverage: the load average is the first field of /proc/loadavg,
// read again just after (it changes every 5 s, so the two readings are
// equal or the test reads it a third time).
func TestLoadAverage(t *testing.T) {
	read := func() float64 {
		b, err := os.ReadFile("/proc/loadavg")
		if err != nil {
			t.Skip("no /proc/loadavg")
		}
		v, err := strconv.ParseFloat(strings.Fields(string(b))[0], 64)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for range 3 {
		before, got, after := read(), LoadAverage(), read()
		if before == after {
			if got != before || got < 0 {
				t.Fatalf("LoadAverage() = %g, /proc/loadavg says %g", got, before)
			}
			return
		}
	}
	t.Skip("the load average kept changing")
}
