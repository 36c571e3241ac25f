package sim

import (
	"errors"
	"strconv"
	"strings"
)

// ParseNumber reads a decimal (0.25) or a fraction (1/4), as the command
// line writes probabilities and rule parameters. NaN and ±Inf parse (the
// caller's validation names them); a fraction with a zero denominator is
// an error. The error says which form failed, without the input, for the
// caller to name the field.
func ParseNumber(s string) (float64, error) {
	num, den, frac := strings.Cut(s, "/")
	if !frac {
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return 0, errors.New("not a number")
		}
		return v, nil
	}
	a, err1 := strconv.ParseFloat(strings.TrimSpace(num), 64)
	b, err2 := strconv.ParseFloat(strings.TrimSpace(den), 64)
	if err1 != nil || err2 != nil {
		return 0, errors.New("not a fraction")
	}
	if b == 0 {
		return 0, errors.New("division by zero")
	}
	return a / b, nil
}
