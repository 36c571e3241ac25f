package plots

import (
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
)

// logTicks labels a log axis so that a reader can place a value on it,
// all labels in one format (uniformLabels):
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
				t.Label = "-" // a placeholder: uniformLabels writes it
			}
			ts = append(ts, t)
		}
	}
	uniformLabels(ts, 0)
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

// plainTick reports whether v is written plainly on an axis: 0 and
// magnitudes from 1e-4 to below 1e5 (0.001, 20, 5000).
func plainTick(v float64) bool {
	a := math.Abs(v)
	return a == 0 || a >= 1e-4 && a < 1e5
}

// tickLabel writes a tick value briefly: plainly (0.001, 20, 5000) unless
// exp, else as 1e6 or 2e-5 (no "+", no leading zero in the exponent).
func tickLabel(v float64, exp bool) string {
	if !exp || v == 0 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	s := strconv.FormatFloat(v, 'e', -1, 64)
	mant, e, _ := strings.Cut(s, "e")
	neg := strings.HasPrefix(e, "-")
	e = strings.TrimLeft(e, "+-0")
	if e == "" {
		e = "0"
	}
	if neg {
		e = "-" + e
	}
	return mant + "e" + e
}

// uniformLabels writes the labelled ticks of one axis in one format:
// plainly when every labelled value is (plainTick), else every one as
// m·10^k, so that an axis never shows 10000 beside 1e5. With sig > 0 the
// values are first rounded to sig significant digits.
func uniformLabels(ts []plot.Tick, sig int) {
	round := func(v float64) float64 {
		if sig <= 0 {
			return v
		}
		r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', sig, 64), 64)
		return r
	}
	exp := false
	for _, t := range ts {
		if t.Label != "" && !plainTick(round(t.Value)) {
			exp = true
		}
	}
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = tickLabel(round(ts[i].Value), exp)
		}
	}
}
