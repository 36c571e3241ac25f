package plots

import (
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
)

// logTicks labels a log axis so that a reader can place a value on it:
// every power of ten in range (every other one past eight), and where
// fewer than three decades are in range also 2 and 5 times each power
// and, if that still gives fewer than minLogLabels labels, every integer
// multiple. The multiples not labelled get unlabelled ticks. Only ticks
// within [lo, hi] are returned (gonum would pad the axis for the others).
type logTicks struct{}

// minLogLabels is the fewest labelled ticks a log axis should carry: two
// labels fix the scale only if the reader trusts that it is logarithmic;
// a third shows it.
const minLogLabels = 3

// Ticks implements plot.Ticker.
func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi > lo) || math.IsInf(hi, 0) {
		return nil
	}
	k0, k1 := int(math.Floor(math.Log10(lo))), int(math.Ceil(math.Log10(hi)))
	// mult(m, k) is m·10^k without the rounding of m*math.Pow10(k).
	mult := func(m, k int) float64 {
		v, _ := strconv.ParseFloat(strconv.Itoa(m)+"e"+strconv.Itoa(k), 64)
		return v
	}
	in := func(v float64) bool { return v >= lo*(1-1e-12) && v <= hi*(1+1e-12) }
	decades := 0
	for k := k0; k <= k1; k++ {
		if in(mult(1, k)) {
			decades++
		}
	}
	label := func(m, k int) bool {
		switch {
		case decades > 8:
			return m == 1 && k%2 == 0
		case decades >= minLogLabels:
			return m == 1
		}
		return m == 1 || m == 2 || m == 5
	}
	count := 0
	for k := k0; k <= k1; k++ {
		for m := 1; m <= 9; m++ {
			if in(mult(m, k)) && label(m, k) {
				count++
			}
		}
	}
	all := count < minLogLabels
	var ts []plot.Tick
	for k := k0; k <= k1; k++ {
		for m := 1; m <= 9; m++ {
			v := mult(m, k)
			if !in(v) {
				continue
			}
			t := plot.Tick{Value: v}
			if all || label(m, k) {
				t.Label = tickLabel(v)
			}
			ts = append(ts, t)
		}
	}
	return ts
}

// labelledTicks counts the labelled ticks the axis draws within its range.
func labelledTicks(a *plot.Axis) int {
	n := 0
	for _, t := range a.Tick.Marker.Ticks(a.Min, a.Max) {
		if t.Label != "" && t.Value >= a.Min && t.Value <= a.Max {
			n++
		}
	}
	return n
}

// tickLabel writes a tick value briefly: plainly from 1e-4 to 1e5
// (0.001, 20, 5000), else as 1e6 or 2e-5 (no "+", no leading zero in the
// exponent).
func tickLabel(v float64) string {
	if a := math.Abs(v); a == 0 || a >= 1e-4 && a < 1e5 {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	s := strconv.FormatFloat(v, 'e', -1, 64)
	mant, exp, _ := strings.Cut(s, "e")
	neg := strings.HasPrefix(exp, "-")
	exp = strings.TrimLeft(exp, "+-0")
	if neg {
		exp = "-" + exp
	}
	return mant + "e" + exp
}
