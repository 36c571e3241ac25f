package data_test

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/data"
	"github.com/specsim/specsim/experiments"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/check"
	"github.com/specsim/specsim/sim/source"
)

// markovPair is the pair of 'simulate exact --source markov:V=4,order=1,seed=7'.
func markovPair(t testing.TB, spec string) sim.Pair {
	t.Helper()
	src, err := source.New(spec, 2, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	pair, _ := sim.PairOf(src)
	return pair
}

// writeRun logs a run of pair into a temporary file and returns its path.
func writeRun(t testing.TB, pair sim.Pair, cfg data.RunConfig, opt data.WriterOptions) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "run.parquet")
	if cfg.Rule == nil {
		cfg.Rule = algos.Token{}
	}
	err := data.WriteLog(path, opt, func(w *data.Writer) error {
		return data.LogRun(context.Background(), w, pair, pair.Name+"/p", pair.Name+"/q", cfg)
	})
	if err != nil {
		t.Fatal(err)
	}
	return path
}

func rule(t testing.TB, name string) experiments.ReplayRule {
	t.Helper()
	e, err := algos.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	a, err := e.Build(nil)
	if err != nil {
		t.Fatal(err)
	}
	return experiments.ReplayRule{Name: name, Algo: a, Greedy: e.Greedy}
}

func TestRoundTripDenseAndSparse(t *testing.T) {
	pair := markovPair(t, "markov:V=6,order=2,a=0.5,quality=0.5,seed=3")
	cfg := data.RunConfig{Steps: 50, Gamma: 3, Seed: 9, RunID: "rt", StepsPerPrompt: 20, Sampling: data.Sampling{Temperature: 1, TopP: 1}}
	dense := writeRun(t, pair, cfg, data.WriterOptions{RowGroupBytes: 1000, Provenance: data.BuildProvenance("test", "markov", 9)})
	sparse := writeRun(t, pair, cfg, data.WriterOptions{Sparse: 6})
	rd, err := data.Open(dense, data.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	rs, err := data.Open(sparse, data.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	if m := rd.Meta(); m.Rows != 50 || m.RowGroups < 2 || m.Provenance.Writer != "test" || m.Provenance.Seed != 9 || m.Provenance.Source != "markov" {
		t.Fatalf("meta %+v: want 50 rows in several row groups and the provenance written", m)
	}
	n := 0
	for rd.Next() {
		if !rs.Next() {
			t.Fatalf("sparse log ended at row %d: %v", n, rs.Err())
		}
		a, b := rd.Step(), rs.Step()
		if a.PromptID != int64(n/20) || a.Step != int64(n%20) || a.RunID != "rt" {
			t.Fatalf("row %d: prompt %d step %d run %q", n, a.PromptID, a.Step, a.RunID)
		}
		// Sparse with nnz = V is lossless: the blocks agree exactly.
		ba, bb := rd.Block(), rs.Block()
		for i := range ba.P {
			for x := 0; x < ba.V(); x++ {
				if ba.P[i].At(x) != bb.P[i].At(x) || (i < len(ba.Q) && ba.Q[i].At(x) != bb.Q[i].At(x)) {
					t.Fatalf("row %d row %d token %d: dense and sparse differ", n, i, x)
				}
			}
		}
		if !slicesEqual(a.Tokens, b.Tokens) || !slicesEqual(a.Emitted, b.Emitted) {
			t.Fatalf("row %d: tokens differ", n)
		}
		n++
	}
	if rd.Err() != nil || n != 50 {
		t.Fatalf("read %d rows, err %v", n, rd.Err())
	}
}

func slicesEqual(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestSparseTail checks the tail spreading of a truly sparse row: stored
// entries are exact and the rest share the tail uniformly.
func TestSparseTail(t *testing.T) {
	pair := markovPair(t, "markov:V=8,order=1,a=0.5,quality=0.5,seed=4")
	cfg := data.RunConfig{Steps: 30, Gamma: 2, Seed: 2, Sampling: data.Sampling{Temperature: 1, TopP: 1}}
	path := writeRun(t, pair, cfg, data.WriterOptions{Sparse: 2})
	r, err := data.Open(path, data.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for r.Next() {
		raw, b := r.Raw(), r.Block()
		if raw.Layout != data.LayoutSparse {
			t.Fatalf("layout %q", raw.Layout)
		}
		// q_1 keeps the 2 largest entries plus x_1.
		n := int(raw.QNNZ[0])
		if n < 2 || n > 3 {
			t.Fatalf("q_1 keeps %d entries; want 2 or 3", n)
		}
		s := 0.0
		for x := 0; x < 8; x++ {
			s += b.Q[0].At(x)
		}
		if math.Abs(s-1) > 1e-6 {
			t.Fatalf("expanded q_1 sums to %g", s)
		}
		for k := 0; k < n; k++ {
			if got := float32(b.Q[0].At(int(raw.QIndex[k]))); got != raw.QValue[k] {
				t.Fatalf("stored entry changed: %g vs %g", got, raw.QValue[k])
			}
		}
	}
	if r.Err() != nil {
		t.Fatal(r.Err())
	}
	if len(r.Warnings()) != 1 {
		t.Fatalf("want one warning about the sparse tails, got %v", r.Warnings())
	}
}

// TestReplayMatchesExact is the acceptance test of issue 6: replaying a
// log of a Markov pair gives, per step, the exact conditional expectations
// of the rule's Law on the model's own float64 rows (up to float32
// storage), and averaged over steps the exact engine's expectation within
// a 4.5σ interval (fixed seed).
func TestReplayMatchesExact(t *testing.T) {
	pair := markovPair(t, "markov:V=4,order=1,a=0.5,quality=0.5,seed=7")
	const gamma, steps = 3, 4000
	cfg := data.RunConfig{Steps: steps, Gamma: gamma, Seed: 11, RunID: "exact", StepsPerPrompt: 25,
		Sampling: data.Sampling{Temperature: 1, TopP: 1}}
	path := writeRun(t, pair, cfg, data.WriterOptions{})
	for _, name := range []string{"token", "token-nobonus", "greedy", "exact-match"} {
		t.Run(name, func(t *testing.T) {
			ru := rule(t, name)
			lw := ru.Algo.(sim.Lawer)
			// The exact engine's E[accepted], E[emitted] per context state.
			exact := map[int][2]float64{}
			m := pair.P.(*sim.Markov)
			ctxs := map[int][]int{}
			var results []experiments.StepResult
			var ctx []int
			r, err := data.Open(path, data.ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			// Reconstruct every step's context from the emitted tokens.
			rep, err := experiments.Replay(context.Background(), r, []experiments.ReplayRule{ru}, experiments.ReplayConfig{Seed: 5,
				PerStep: func(s experiments.StepResult) error { results = append(results, s); return nil }})
			if err != nil {
				t.Fatal(err)
			}
			r2, _ := data.Open(path, data.ReadOptions{})
			defer r2.Close()
			var law sim.Law
			blk := sim.Block{Tokens: make([]int, gamma), P: make([]sim.Row, gamma+1), Q: make([]sim.Row, gamma)}
			var sumDiff, sumSq float64
			k := 0
			for r2.Next() {
				st := r2.Step()
				if st.Step == 0 {
					ctx = ctx[:0]
				}
				state := m.State(ctx)
				if _, ok := exact[state]; !ok {
					res, err := sim.Exact(pair, lw, sim.ExactConfig{Gamma: gamma, Context: append([]int(nil), ctx...)})
					if err != nil {
						t.Fatal(err)
					}
					exact[state] = [2]float64{res.ExpectedAccepted, res.ExpectedEmitted}
					ctxs[state] = append([]int(nil), ctx...)
				}
				// The rule's law on float64 model rows at the same prefixes.
				seq := append([]int(nil), ctx...)
				copy(blk.Tokens, st.Tokens)
				for i := 0; i <= gamma; i++ {
					p := make([]float64, 4)
					pair.P.Next(seq, p)
					blk.P[i] = sim.F64(p)
					if i < gamma {
						q := make([]float64, 4)
						pair.Q.Next(seq, q)
						blk.Q[i] = sim.F64(q)
						seq = append(seq, st.Tokens[i])
					}
				}
				lw.Law(&blk, &law)
				got := results[k]
				if d := math.Abs(got.AcceptedExact - law.ExpectedAccepted()); d > 1e-5 {
					t.Fatalf("row %d: replayed E[accepted | draft] = %.9g, model rows give %.9g", k, got.AcceptedExact, law.ExpectedAccepted())
				}
				if d := math.Abs(got.EmittedExact - law.ExpectedEmitted()); d > 1e-5 {
					t.Fatalf("row %d: replayed E[emitted | draft] = %.9g, model rows give %.9g", k, got.EmittedExact, law.ExpectedEmitted())
				}
				d := got.AcceptedExact - exact[state][0]
				sumDiff += d
				sumSq += d * d
				ctx = append(ctx, st.Emitted...)
				k++
			}
			if k != steps || rep.Steps != steps {
				t.Fatalf("replayed %d/%d steps", k, rep.Steps)
			}
			// Mean over steps of E[acc|draft_s] - E_exact[acc | ctx_s]:
			// zero in expectation (the draft is a fresh q-sample given the
			// context), and the differences are martingale increments.
			mean := sumDiff / steps
			se := math.Sqrt((sumSq/steps - mean*mean) / steps)
			if math.Abs(mean) > 4.5*se {
				t.Fatalf("mean exact-given-draft minus exact engine = %.5f, se %.5f: more than 4.5 se", mean, se)
			}
			t.Logf("%s: mean E[accepted] %.5f (exact engine difference %.5f ± %.5f), sampled %.4f [%.4f, %.4f], lossless %s p=%.3g",
				name, rep.Rules[0].MeanAcceptedExact, mean, se, rep.Rules[0].MeanAcceptedSampled, rep.Rules[0].AcceptedCI95[0],
				rep.Rules[0].AcceptedCI95[1], rep.Rules[0].Lossless.Verdict, rep.Rules[0].Lossless.PValue)
			if z := rep.Rules[0].ExactMinusSampledZ; math.Abs(z) > 4.5 {
				t.Fatalf("sampled emitted disagrees with the law: z = %.2f", z)
			}
			// Greedy is checked against argmax p_1, which it always emits.
			if v := rep.Rules[0].Lossless.Verdict; v != check.NotDetected {
				t.Fatalf("lossless verdict %s (p = %g), want consistent", v, rep.Rules[0].Lossless.PValue)
			}
		})
	}
}

// TestStartContextMean compares the mean over prompts of the first step's
// exact E[emitted | draft] with sim.Exact at the empty context.
func TestStartContextMean(t *testing.T) {
	pair := markovPair(t, "markov:V=4,order=1,a=0.5,quality=0.5,seed=7")
	const gamma, steps = 2, 3000
	path := writeRun(t, pair, data.RunConfig{Steps: steps, Gamma: gamma, Seed: 3, StepsPerPrompt: 1,
		Sampling: data.Sampling{Temperature: 1, TopP: 1}}, data.WriterOptions{})
	r, err := data.Open(path, data.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ru := rule(t, "token")
	rep, err := experiments.Replay(context.Background(), r, []experiments.ReplayRule{ru}, experiments.ReplayConfig{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	ex, err := sim.Exact(pair, ru.Algo.(sim.Lawer), sim.ExactConfig{Gamma: gamma})
	if err != nil {
		t.Fatal(err)
	}
	rr := rep.Rules[0]
	// 4.5σ interval around the mean over steps (fixed seed).
	half := (rr.EmittedExactCI95[1] - rr.EmittedExactCI95[0]) / 2 / 1.959964 * 4.5
	if math.Abs(rr.MeanEmittedExact-ex.ExpectedEmitted) > half {
		t.Fatalf("replay mean E[emitted] %.5f vs exact engine %.5f (±%.5f)", rr.MeanEmittedExact, ex.ExpectedEmitted, half)
	}
	if rr.EmittedCI95[0] > ex.ExpectedEmitted+1e-9 && rr.EmittedCI95[1] < ex.ExpectedEmitted {
		t.Fatalf("sampled CI %v misses %.5f", rr.EmittedCI95, ex.ExpectedEmitted)
	}
	// α per position: position 1 is always at the empty context.
	p, q := make([]float64, 4), make([]float64, 4)
	pair.P.Next(nil, p)
	pair.Q.Next(nil, q)
	if a := sim.Alpha(p, q); math.Abs(rep.Positions[0].MeanAlpha-a) > 1e-6 {
		t.Fatalf("position 1 mean α %.7f, want Σmin(p,q) = %.7f", rep.Positions[0].MeanAlpha, a)
	}
	t.Logf("mean E[emitted] replay %.5f, exact %.5f; sampled %.4f %v", rr.MeanEmittedExact, ex.ExpectedEmitted, rr.MeanEmittedSampled, rr.EmittedCI95)
}

// TestTransformBugsCaught plants the published p/q processing
// mismatches (vllm-project/vllm issue 9834): a log of raw
// logits with temperature and top-k, replayed with p and q processed
// identically, passes the losslessness check; with p left raw (vLLM 9834)
// or q left raw (transformers 47932) it fails.
func TestTransformBugsCaught(t *testing.T) {
	pair := markovPair(t, "markov:V=8,order=1,a=0.5,quality=0.3,seed=5")
	s := data.Sampling{Temperature: 0.6, TopK: 3, TopP: 1}
	path := writeRun(t, pair, data.RunConfig{Steps: 6000, Gamma: 2, Seed: 8, StepsPerPrompt: 50, Sampling: s, Logits: true}, data.WriterOptions{})
	for _, c := range []struct {
		bug  data.Bug
		want string
	}{{data.BugNone, check.NotDetected}, {data.BugPRaw, "violated"}, {data.BugQRaw, "violated"}} {
		r, err := data.Open(path, data.ReadOptions{Bug: c.bug})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := experiments.Replay(context.Background(), r, []experiments.ReplayRule{rule(t, "token")}, experiments.ReplayConfig{Seed: 4})
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		lc := rep.Rules[0].Lossless
		t.Logf("bug %q: chi2 %.1f df %d p %.3g obs %v", c.bug, lc.Stat, lc.DF, lc.PValue, lc.Observed)
		if lc.Verdict != c.want {
			t.Errorf("bug %q: verdict %s (p = %g), want %s", c.bug, lc.Verdict, lc.PValue, c.want)
		}
		if c.bug == data.BugNone && rep.LoggedLossless.Verdict != check.NotDetected {
			t.Errorf("the logged run itself fails the check: %+v", rep.LoggedLossless)
		}
	}
	// Probability logs cannot carry a transform bug.
	plain := writeRun(t, pair, data.RunConfig{Steps: 3, Gamma: 2, Seed: 1, Sampling: data.Sampling{Temperature: 1, TopP: 1}}, data.WriterOptions{})
	r, _ := data.Open(plain, data.ReadOptions{Bug: data.BugPRaw})
	defer r.Close()
	if r.Next() || !errors.Is(r.Err(), data.ErrInvalid) {
		t.Fatalf("bug on a probability log: want ErrInvalid, got %v", r.Err())
	}
}

func TestReplayMutantsCaught(t *testing.T) {
	pair := markovPair(t, "markov:V=6,order=1,a=0.5,quality=0.3,seed=2")
	path := writeRun(t, pair, data.RunConfig{Steps: 6000, Gamma: 2, Seed: 8, StepsPerPrompt: 50,
		Sampling: data.Sampling{Temperature: 1, TopP: 1}}, data.WriterOptions{})
	r, err := data.Open(path, data.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	names := []string{"token", "mutant-resample-p", "mutant-always-accept"}
	var rules []experiments.ReplayRule
	for _, n := range names {
		rules = append(rules, rule(t, n))
	}
	rep, err := experiments.Replay(context.Background(), r, rules, experiments.ReplayConfig{Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	for i, rr := range rep.Rules {
		want := "violated"
		if names[i] == "token" {
			want = check.NotDetected
		}
		if rr.Lossless.Verdict != want {
			t.Errorf("%s: verdict %s (p = %g), want %s", rr.Name, rr.Lossless.Verdict, rr.Lossless.PValue, want)
		}
	}
}

var _ = bytes.NewReader
var _ = os.ReadFile

// A probabilities log at temperature 0 stores the processed rows, one-hot
// under greedy decoding: a file that stores the soft rows instead is
// refused at its first step, naming the row, rather than having every
// argmax token it emitted judged against the soft law; one-hot rows read.
func TestGreedyProbsOneHot(t *testing.T) {
	for _, c := range []struct {
		soft bool
		want string
	}{{false, ""}, {true, "row q_1 at temperature 0 is not one-hot"}} {
		var buf bytes.Buffer
		w := data.NewWriter(&buf, data.WriterOptions{Provenance: data.BuildProvenance("test", "greedy", 1)})
		row := func(hot int) []float32 {
			r := []float32{0, 0, 0}
			r[hot] = 1
			if c.soft {
				r = []float32{0.2, 0.3, 0.5}
			}
			return r
		}
		st := &data.Step{RunID: "r", Kind: data.KindProbs, Sampling: data.Sampling{Temperature: 0, TopP: 1},
			Tokens: []int{2}, Emitted: []int{2, 2}, Q: [][]float32{row(2)}, P: [][]float32{row(2), row(2)}}
		if err := w.Write(st); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		r, err := data.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()), data.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		r.Next()
		err = r.Err()
		r.Close()
		var se *data.StepError
		switch {
		case c.want == "" && err != nil:
			t.Errorf("one-hot rows: %v", err)
		case c.want != "" && (!errors.As(err, &se) || se.Field != "q" || !strings.Contains(err.Error(), c.want)):
			t.Errorf("soft rows at T = 0: error %v, want a StepError on q saying %q", err, c.want)
		}
	}
}
