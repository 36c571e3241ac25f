package seq

import (
	"context"

	"github.com/specsim/specsim/lm"
	"github.com/specsim/specsim/sim/draft"
)

// Spec is a generation experiment named by model specs (package lm): the
// pair is trained, or read from the cache, then Generate runs.
type Spec struct {
	// Target and Draft are lm model specs, e.g. "code:order=6,cache=0.5"
	// and "order=2".
	Target, Draft string
	// CacheDir holds trained models ("" disables the disk cache).
	CacheDir string
	// NumPrompts prompts of PromptLen tokens (default 128) are cut from
	// the corpus's held-out files.
	NumPrompts, PromptLen int
	// Config holds everything else; its Pair, Heads and Prompts are set
	// by Run.
	Config
}

// Report is a Result with what it ran on.
type Report struct {
	Target     string        `json:"target"`
	Draft      string        `json:"draft"`
	PromptLen  int           `json:"prompt_len"`
	Provenance lm.Provenance `json:"provenance"`
	Result
}

// Run builds the pair of s and generates.
func Run(ctx context.Context, s Spec) (Report, error) {
	pr, err := lm.NewPairContext(ctx, s.Target, s.Draft, lm.Options{CacheDir: s.CacheDir})
	if err != nil {
		return Report{}, err
	}
	return RunPair(ctx, pr, s)
}

// RunPair generates with an already built pair (the experiments reuse one
// pair across many cells).
func RunPair(ctx context.Context, pr *lm.Pair, s Spec) (Report, error) {
	if s.PromptLen == 0 {
		s.PromptLen = 128
	}
	ps, err := pr.Prompts(s.NumPrompts, s.PromptLen)
	if err != nil {
		return Report{}, err
	}
	cfg := s.Config
	cfg.Pair, cfg.Prompts = pr.Pair, ps
	if cfg.Drafter == draft.HeadsName {
		if cfg.Heads, err = pr.Heads(cfg.Gamma); err != nil {
			return Report{}, err
		}
	}
	res, err := Generate(ctx, cfg)
	return Report{Target: s.Target, Draft: s.Draft, PromptLen: s.PromptLen, Provenance: pr.Provenance, Result: res}, err
}
