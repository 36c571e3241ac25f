package data

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// Sampling is the sampling configuration of a logged run. When a log
// holds raw logits, Apply turns each row into the law the run drew from;
// speculative sampling is lossless for the processed target only if the
// same transform is applied to p and q before verification (Leviathan et
// al., arXiv 2211.17192, §2.2 "standardized sampling").
//
// The order of the filters follows Hugging Face transformers'
// generate() (TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper,
// MinPLogitsWarper) and vLLM's sampler:
//
//  1. temperature: w(x) = exp((l(x) - max l)/T); T = 0 is greedy: the
//     one-hot row of argmax l (lowest index on ties);
//  2. top-k: keep the tokens whose weight is at least the K-th largest
//     (ties at the threshold are kept, as in transformers);
//  3. top-p: sort the kept tokens by weight, descending (ties by index),
//     and keep the shortest prefix whose mass reaches P of the kept mass:
//     token k is kept iff the mass before it is < P (the first always is);
//  4. min-p: keep the tokens with weight ≥ MinP · max weight;
//  5. renormalise.
type Sampling struct {
	// Temperature T ≥ 0; 0 means greedy.
	Temperature float64
	// TopK keeps the K most likely tokens; 0 disables it.
	TopK int
	// TopP in (0, 1] is the nucleus mass; 1 disables it.
	TopP float64
	// MinP in [0, 1) is the min-p ratio; 0 disables it.
	MinP float64
}

// Validate reports parameters out of range, naming the field.
func (s Sampling) Validate() error {
	switch {
	case !(s.Temperature >= 0) || math.IsInf(s.Temperature, 0):
		return fmt.Errorf("temperature = %g; use a finite value >= 0 (0 for greedy)", s.Temperature)
	case s.TopK < 0:
		return fmt.Errorf("top_k = %d; use 0 (off) or a positive count", s.TopK)
	case !(s.TopP > 0 && s.TopP <= 1):
		return fmt.Errorf("top_p = %g; use a value in (0, 1] (1 for off)", s.TopP)
	case !(s.MinP >= 0 && s.MinP < 1):
		return fmt.Errorf("min_p = %g; use a value in [0, 1) (0 for off)", s.MinP)
	}
	return nil
}

// Greedy reports whether the configuration is greedy decoding (T = 0).
func (s Sampling) Greedy() bool { return s.Temperature == 0 }

// String renders the configuration for reports.
func (s Sampling) String() string {
	return fmt.Sprintf("temperature=%g,top_k=%d,top_p=%g,min_p=%g", s.Temperature, s.TopK, s.TopP, s.MinP)
}

// Transformer applies a Sampling to rows of logits, reusing its scratch
// space; the zero value is ready. It is not safe for concurrent use.
type Transformer struct {
	w, sel []float64
	idx    []int
}

// Apply writes into dst (len(dst) = len(logits)) the processed
// probabilities of one row of logits. Logits may be -Inf (a token the
// model excludes) but not NaN or +Inf, and not all -Inf; the caller
// validates s. It returns an error naming the problem for bad logits.
func (t *Transformer) Apply(s Sampling, dst, logits []float32) error {
	v := len(logits)
	best, m := -1, math.Inf(-1)
	for x, l := range logits {
		f := float64(l)
		if math.IsNaN(f) || math.IsInf(f, 1) {
			return fmt.Errorf("logit %d is %v; logits must be finite or -Inf", x, f)
		}
		if f > m {
			best, m = x, f
		}
	}
	if best < 0 {
		return fmt.Errorf("every logit is -Inf; the row excludes every token")
	}
	if s.Greedy() {
		clear(dst)
		dst[best] = 1
		return nil
	}
	t.w = grow64(t.w, v)
	w := t.w
	for x, l := range logits {
		w[x] = math.Exp((float64(l) - m) / s.Temperature)
	}
	if s.TopK > 0 && s.TopK < v {
		t.sel = append(t.sel[:0], w...)
		// The K-th largest weight: select the (v-K)-th smallest.
		thr := kth(t.sel, v-s.TopK)
		for x := range w {
			if w[x] < thr {
				w[x] = 0
			}
		}
	}
	if s.TopP < 1 {
		t.idx = t.idx[:0]
		total := 0.0
		for x, wx := range w {
			if wx > 0 {
				t.idx = append(t.idx, x)
				total += wx
			}
		}
		slices.SortStableFunc(t.idx, func(a, b int) int { return cmp.Compare(w[b], w[a]) }) // descending
		before, cut := 0.0, len(t.idx)
		for k, x := range t.idx {
			if k > 0 && before >= s.TopP*total {
				cut = k
				break
			}
			before += w[x]
		}
		for _, x := range t.idx[cut:] {
			w[x] = 0
		}
	}
	if s.MinP > 0 {
		mx := 0.0
		for _, wx := range w {
			mx = math.Max(mx, wx)
		}
		thr := s.MinP * mx
		for x := range w {
			if w[x] < thr {
				w[x] = 0
			}
		}
	}
	z := 0.0
	for _, wx := range w {
		z += wx
	}
	for x, wx := range w {
		dst[x] = float32(wx / z)
	}
	return nil
}

// kth returns the k-th smallest element (0-based) of a, reordering a
// (Hoare's quickselect with a median-of-three pivot; O(len(a)) expected).
func kth(a []float64, k int) float64 {
	lo, hi := 0, len(a)-1
	for lo < hi {
		mid := lo + (hi-lo)/2
		if a[mid] < a[lo] {
			a[mid], a[lo] = a[lo], a[mid]
		}
		if a[hi] < a[lo] {
			a[hi], a[lo] = a[lo], a[hi]
		}
		if a[hi] < a[mid] {
			a[hi], a[mid] = a[mid], a[hi]
		}
		pivot := a[mid]
		i, j := lo, hi
		for i <= j {
			for a[i] < pivot {
				i++
			}
			for a[j] > pivot {
				j--
			}
			if i <= j {
				a[i], a[j] = a[j], a[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return a[k]
		}
	}
	return a[k]
}

func grow64(dst []float64, n int) []float64 {
	if cap(dst) < n {
		return make([]float64, n)
	}
	return dst[:n]
}

// Bug plants one of the published p/q processing mismatches in replay
// (docs/rules.md lists their threads): the draft tokens stay those the logged run drew from
// the correctly processed q, but the rows handed to the rule are
// processed wrongly. Replay's losslessness check must flag every bug
// other than BugNone on logs whose transform is not the identity. Bugs
// apply to logs of raw logits only.
type Bug string

// The planted bugs.
const (
	// BugNone processes p and q identically (correct).
	BugNone Bug = ""
	// BugPRaw leaves the target rows unprocessed (softmax at T = 1, no
	// filters) while q is processed: sampling parameters not applied to
	// the target probabilities (vllm-project/vllm issue 9834, fixed by
	// PR 10198).
	BugPRaw Bug = "p-raw"
	// BugQRaw hands the rule the raw draft law softmax(l) while the draft
	// was sampled from the processed one: "q returned ≠ q sampled"
	// (huggingface/transformers issue 47932; §7.6 item 1).
	BugQRaw Bug = "q-raw"
	// BugQBF16 computes the rule's q from logits rounded to bfloat16 while
	// the draft was sampled from the float32 ones (deepseek-ai/DeepSpec
	// issue 31, precision mismatch between sampling and ratio; §7.6
	// item 6). Its bias is small: expect to need many steps to see it.
	BugQBF16 Bug = "q-bf16"
)

// Bugs lists the planted bugs (BugNone excluded).
func Bugs() []Bug { return []Bug{BugPRaw, BugQRaw, BugQBF16} }

// ParseBug parses a bug name ("" or "none" for BugNone).
func ParseBug(s string) (Bug, error) {
	if s == "" || s == "none" {
		return BugNone, nil
	}
	for _, b := range Bugs() {
		if string(b) == s {
			return b, nil
		}
	}
	return BugNone, fmt.Errorf("unknown transform bug %q; use none, p-raw, q-raw or q-bf16", s)
}

// bf16 rounds a float32 to the nearest bfloat16 (round half to even) and
// back, as torch's .to(torch.bfloat16) does.
func bf16(f float32) float32 {
	b := math.Float32bits(f)
	if f != f || math.IsInf(float64(f), 0) {
		return f
	}
	b += 0x7fff + (b>>16)&1
	return math.Float32frombits(b &^ 0xffff)
}
