package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/draft"
)

// treeFlags are the flags 'simulate exact' gains for tree rules.
func treeFlags() []cli.Flag {
	return []cli.Flag{
		kFlag("number of draft candidates (> 1 needs a tree rule such as specinfer)"),
		&cli.StringFlag{Name: "draft", Usage: "tree rules: draft kind " + draftKinds("|") + " (default: the rule's own)"},
		&cli.StringFlag{Name: "branch", Usage: "tree rules: children per depth, e.g. 3,2 (default: k,1,...,1 of length --gamma); drafts " + strings.Join(draft.BranchingNames(), ", ") + " only (others refuse it)"},
		&cli.IntFlag{Name: "delay", Usage: "tree rules with --draft " + draft.DraftDelayed.String() + ": tokens drafted as a single path before the k i.i.d. chains branch, 0 to --gamma (delayed tree expansion, arXiv 2602.16994); other drafts refuse it"},
	}
}

// draftKinds joins the names of sim.DraftKinds with sep.
func draftKinds(sep string) string {
	var names []string
	for _, k := range sim.DraftKinds() {
		names = append(names, k.String())
	}
	return strings.Join(names, sep)
}

// isTreeRun reports whether 'simulate exact' should run the tree engine.
func isTreeRun(c *cli.Context) bool {
	return algos.IsTree(c.String("algo")) || c.IsSet("k") && c.Int("k") != draft.ChainK || c.IsSet("draft") || c.IsSet("branch") || c.IsSet("delay")
}

// exactTreeJSON is the JSON form of 'simulate exact' for tree rules.
// Field names are stable.
type exactTreeJSON struct {
	Algorithm     string             `json:"algorithm"`
	Params        map[string]float64 `json:"params"`
	Source        string             `json:"source"`
	Seed          *uint64            `json:"seed"` // null for -p/-q
	V             int                `json:"V"`
	K             int                `json:"k"`
	Depth         int                `json:"depth"`
	Draft         string             `json:"draft"`
	Branch        []int              `json:"branch,omitempty"`
	Delay         int                `json:"delay,omitempty"`
	L             int                `json:"L"`
	Trees         int                `json:"trees"`
	Acceptance    float64            `json:"acceptance"`
	FirstAccepted float64            `json:"first_accepted"`
	exactLaw
	FirstTV           float64   `json:"first_tv"`
	Lossless          bool      `json:"lossless"`
	Lossy             bool      `json:"lossy"`
	Mutant            bool      `json:"mutant"`
	OptimalAcceptance float64   `json:"optimal_acceptance"`
	Gap               float64   `json:"gap"`
	First             []float64 `json:"first"`
	TargetFirst       []float64 `json:"target_first"`
}

func parseBranch(s string) ([]int, error) {
	var br []int
	for i, part := range strings.Split(s, ",") {
		b, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || b < 1 {
			return nil, fmt.Errorf("--branch entry %d (%q) must be a positive integer, e.g. --branch 3,2", i, part)
		}
		br = append(br, b)
	}
	return br, nil
}

// exactTree is 'simulate exact' for tree rules and k > 1.
func exactTree(c *cli.Context) error {
	name := c.String("algo")
	e, err := algos.LookupTree(name)
	if err != nil {
		if _, chainErr := algos.Lookup(name); chainErr == nil {
			return diag.Usage(fmt.Errorf("algorithm %s verifies a single chain; --k, --draft and --branch need a tree rule: %s", name, strings.Join(algos.TreeNames(), ", ")))
		}
		return diag.Usage(err)
	}
	a, full, err := buildRule(c, e)
	if err != nil {
		return err
	}
	lw, ok := a.(sim.TreeLawer)
	if !ok {
		return diag.Usage(fmt.Errorf("tree algorithm %s has no exact law", e.Name))
	}
	k, err := givenK(c)
	if err != nil {
		return err
	}
	depth := c.Int("gamma")
	kind := e.Draft
	if c.IsSet("draft") {
		if kind, err = sim.ParseDraftKind(c.String("draft")); err != nil {
			return diag.Usage(fmt.Errorf("--draft: %w", err))
		}
	}
	if err := algos.DrafterError(e, kind.String(), "draft"); err != nil {
		return diag.Usage(err)
	}
	k = draft.K(k, kind.String())
	var branch []int
	if c.IsSet("branch") {
		if !draft.Branches(kind.String()) {
			return diag.Usage(draft.BranchError(kind.String()))
		}
		if branch, err = parseBranch(c.String("branch")); err != nil {
			return diag.Usage(err)
		}
		depth, k = len(branch), branch[0]
	}
	seed := masterSeed(c)
	pair, err := pairFromFlags(c, seed)
	if err != nil {
		return err
	}
	delay := c.Int("delay")
	d, err := draft.NewTree(kind, draft.Config{Q: pair.Q, K: k, Depth: depth, Branch: branch, Delay: delay})
	if err != nil {
		return diag.Usage(err)
	}
	ctx, stop := signalContext(c.Context)
	defer stop()
	res, err := sim.ExactTreeContext(ctx, pair.P, d, lw, sim.TreeExactConfig{L: c.Int("L")})
	if err != nil {
		return exactErr(ctx, err)
	}
	v := pair.P.Vocab()
	bound, err := treeBound(kind, pair, k, branch, delay)
	if err != nil {
		return diag.Usage(err)
	}
	out := exactTreeJSON{Algorithm: e.Name, Params: full, Source: pair.Name, Seed: sourceSeed(c, seed), V: v, K: k, Depth: res.Depth,
		Draft: kind.String(), Branch: branch, Delay: delay, L: res.L, Trees: res.Trees, Acceptance: res.Acceptance, FirstAccepted: res.FirstAccepted,
		exactLaw: newExactLaw(res.ExpectedAccepted, res.ExpectedEmitted, res.SeqComparison), FirstTV: res.FirstTV, Lossless: res.Lossless, Lossy: e.Lossy,
		Mutant: e.Mutant, OptimalAcceptance: bound, Gap: bound - res.Acceptance, First: res.First, TargetFirst: res.TargetFirst}
	return printResult(c, out, func(w io.Writer) {
		fmt.Fprintf(w, "tree algorithm %s, %s drafts, k = %d, depth %d on %s (V = %d, L = %d, %d trees%s)\n",
			out.Algorithm, out.Draft, out.K, out.Depth, out.Source, out.V, out.L, out.Trees, seedNote(out.Seed))
		fmt.Fprintf(w, "acceptance (first token in root drafts) = %.12g  optimal = %.12g  gap = %.3g\n", out.Acceptance, out.OptimalAcceptance, out.Gap)
		fmt.Fprintf(w, "E[accepted] = %.12g  E[emitted] = %.12g per step\n", out.ExpectedAccepted, out.ExpectedEmitted)
		fmt.Fprintf(w, "max |pi(s) - p(s)| = %.3g  TV = %.3g  first-token TV = %.3g  -> lossless: %v\n", out.MaxAbsError, out.TV, out.FirstTV, out.Lossless)
	})
}

// treeBound is the optimal first-position acceptance α* for the root
// drafts of kind with k children on pair's first rows: the closed forms
// of iid, wor, greedy and topk, else the enumerated root set law of the
// kind's depth-1 trees (drafterBound).
func treeBound(kind sim.DraftKind, pair sim.Pair, k int, branch []int, delay int) (float64, error) {
	v := pair.P.Vocab()
	p, q := make([]float64, v), make([]float64, v)
	pair.P.Next(nil, p)
	pair.Q.Next(nil, q)
	switch kind {
	case sim.DraftIID, sim.DraftWOR:
		return algos.OptimalAcceptance(p, q, k, kind == sim.DraftIID)
	case sim.DraftGreedy:
		sets, probs := algos.GreedyDraftSetLaw(q, k)
		return algos.OptimalAcceptanceSets(p, sets, probs), nil
	case sim.DraftTopK:
		return algos.OptimalAcceptanceSets(p, [][]int{sim.TopTokens(nil, q, k)}, []float64{1}), nil
	}
	return drafterBound(kind, pair, p, k, branch, delay)
}

// drafterBound is α* for the root drafts of kind with k children (or
// branch[0]; one child when a delayed tree's path is not empty), from the
// set law of its depth-1 trees: the bound of a draft kind that has no
// closed form.
func drafterBound(kind sim.DraftKind, pair sim.Pair, p []float64, k int, branch []int, delay int) (float64, error) {
	var b1 []int
	if len(branch) > 0 {
		b1 = branch[:1]
	}
	d, err := draft.NewTree(kind, draft.Config{Q: pair.Q, K: k, Depth: 1, Branch: b1, Delay: min(delay, 1)})
	if err != nil {
		return 0, err
	}
	sets, probs, err := algos.DrafterSetLaw(d, nil)
	if err != nil {
		return 0, err
	}
	return algos.OptimalAcceptanceSets(p, sets, probs), nil
}
