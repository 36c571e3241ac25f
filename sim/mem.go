package sim

import (
	"errors"
	"fmt"
)

// DefaultMemBudget is the memory budget a zero budget stands for: 4 GiB,
// which leaves room for the rest of a run (and a second job) on a
// 16–24 GiB machine.
//
// A memory budget is the most memory, in bytes, that one source (a pool's
// rows and alias tables, a Markov pair's rows, a replayed log's expanded
// rows) may allocate. It is an explicit value: the configs and options of
// whatever builds a source or reads a log carry it as a MemBudget field
// (0 for this default), and constructors check their need against it with
// CheckMem before they allocate, so an oversized spec is refused at once
// instead of being killed by the OOM killer later.
const DefaultMemBudget int64 = 4 << 30

// NoMemLimit is a budget no representable need exceeds: checks that
// validate parameters before the budget is known pass it (an overflowed
// need, -1, is still refused).
const NoMemLimit int64 = 1<<63 - 1

// ErrMemBudget is wrapped by the errors of CheckMem: the spec asks for
// more memory than the budget allows (a usage error for a front end: a
// smaller spec or a larger budget fixes it).
var ErrMemBudget = errors.New("above the memory budget")

type memError struct{ msg string }

func (e memError) Error() string { return e.msg }
func (e memError) Unwrap() error { return ErrMemBudget }

// CheckMem returns an error wrapping ErrMemBudget if need bytes exceed
// budget (0 stands for DefaultMemBudget; a negative need for an
// overflowed product). what names the object and its size parameters,
// fix how to make it smaller.
func CheckMem(what string, need, budget int64, fix string) error {
	if budget == 0 {
		budget = DefaultMemBudget
	}
	if need >= 0 && need <= budget {
		return nil
	}
	n := FormatBytes(need)
	if need < 0 {
		n = "more than 8 EiB"
	}
	return memError{fmt.Sprintf("%s needs about %s, above the memory budget of %s; %s, or raise the budget with --mem-budget",
		what, n, FormatBytes(budget), fix)}
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
