package sim

import (
	"errors"
	"fmt"
	"sync/atomic"
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
// fix how to make it smaller. It is one Reserve of a fresh Accountant.
func CheckMem(what string, need, budget int64, fix string) error {
	return NewAccountant(budget).Reserve(what, need, fix)
}

// Accountant is the memory account of one run: every allocation that
// grows with the input (a check's per-state tallies and PIT tables, its
// batches of draft trees) reserves its size here before it is made, and
// the sum of what the run holds may not pass the budget. It is safe for
// concurrent use.
type Accountant struct {
	budget int64
	used   atomic.Int64
}

// NewAccountant returns an account of budget bytes (0 stands for
// DefaultMemBudget).
func NewAccountant(budget int64) *Accountant {
	if budget == 0 {
		budget = DefaultMemBudget
	}
	return &Accountant{budget: budget}
}

// Reserve adds need bytes to the account, or returns an error wrapping
// ErrMemBudget, leaving the account as it was, if the total would pass the
// budget (a negative need stands for an overflowed product). The error
// names what (the object and its size parameters), its size, the budget,
// fix (the flags that make it smaller) and --mem-budget.
func (a *Accountant) Reserve(what string, need int64, fix string) error {
	for need >= 0 {
		u := a.used.Load()
		if need > a.budget-u {
			break
		}
		if a.used.CompareAndSwap(u, u+need) {
			return nil
		}
	}
	n := FormatBytes(need)
	if need < 0 {
		n = "more than 8 EiB"
	}
	held := ""
	if u := a.used.Load(); u > 0 {
		held = fmt.Sprintf(" (%s of it already held)", FormatBytes(u))
	}
	return memError{fmt.Sprintf("%s needs about %s, above the memory budget of %s%s; %s, or raise the budget with --mem-budget",
		what, n, FormatBytes(a.budget), held, fix)}
}

// Release returns n bytes reserved earlier to the account.
func (a *Accountant) Release(n int64) { a.used.Add(-n) }

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
