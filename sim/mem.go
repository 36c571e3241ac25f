package sim

import (
	"errors"
	"fmt"
)

// DefaultMemBudget is the default of MemBudget: 4 GiB, which leaves room
// for the rest of a run (and a second job) on a 16–24 GiB machine.
const DefaultMemBudget int64 = 4 << 30

// MemBudget is the most memory, in bytes, that one source (a pool's rows
// and alias tables, a Markov pair's rows, a replayed log's expanded rows)
// may allocate. Constructors check their need against it before they
// allocate and fail with ErrMemBudget otherwise, so an oversized spec is
// refused at once instead of being killed by the OOM killer later.
// Front ends raise it from their --mem-budget flag; it is read, never
// written, by the library, so set it before starting any work.
var MemBudget = DefaultMemBudget

// ErrMemBudget is wrapped by the errors of CheckMem: the spec asks for
// more memory than the budget allows (a usage error for a front end: a
// smaller spec or a larger budget fixes it).
var ErrMemBudget = errors.New("above the memory budget")

type memError struct{ msg string }

func (e memError) Error() string { return e.msg }
func (e memError) Unwrap() error { return ErrMemBudget }

// CheckMem returns an error wrapping ErrMemBudget if need bytes exceed
// MemBudget (a negative need stands for an overflowed product). what
// names the object and its size parameters, fix how to make it smaller.
func CheckMem(what string, need int64, fix string) error {
	if need >= 0 && need <= MemBudget {
		return nil
	}
	n := FormatBytes(need)
	if need < 0 {
		n = "more than 8 EiB"
	}
	return memError{fmt.Sprintf("%s needs about %s, above the memory budget of %s; %s, or raise the budget with --mem-budget",
		what, n, FormatBytes(MemBudget), fix)}
}

// MulBytes returns the product of its non-negative factors, or -1 if it
// overflows int64 (CheckMem reports -1 as too large).
func MulBytes(f ...int64) int64 {
	p := int64(1)
	for _, x := range f {
		if x < 0 {
			return -1
		}
		if x != 0 && p > (1<<63-1)/x {
			return -1
		}
		p *= x
	}
	return p
}

// FormatBytes writes n bytes with a binary unit: "512 B", "7.0 GiB".
func FormatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
