package experiments

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/specsim/specsim/plots"
	"github.com/specsim/specsim/smc"
	"github.com/specsim/specsim/table"
)

// smc-steering measures SMC steering (Lew et al. arXiv 2306.03081,
// Algorithm 5; package smc) against exact enumeration on the
// three standard Feynman–Kac models (smc.StandardModels): for every
// resampling scheme and expansion factor K, the relative variance
// Var(Ẑ)/Z² of the evidence estimate and the total variation between the
// weighted particles and the exact posterior, as N grows.
//
// Cells: model × scheme × k (is only at k = 1; the planted bugs only at
// k = 2). Rows: one per n in smcSteeringN with z_exact, runs, z_ratio
// (mean Ẑ/Z) with z_ratio_lo/z_ratio_hi (95% normal interval; 1 must lie
// inside for a correct scheme), relative_variance, posterior_tv with
// tv_lo/tv_hi, mean_ess, particles_mean/min/max (population after each
// resampling step: N for correct schemes), zero_runs and mutant.
const smcSteeringRuns = 1000

var (
	smcSteeringN = []int{4, 8, 16, 32, 64}
	smcSteeringK = []int{1, 2, 4}
)

func init() {
	Register(Experiment{
		Name:    "smc-steering",
		Main:    78,
		Section: "SMC steering against exact enumeration",
		Summary: "SMC steering (Algorithm 5): relative variance of Z-hat and posterior TV vs N for each resampling scheme and K, against exact enumeration",
		Cells: func(Config) ([]Cell, error) {
			var cells []Cell
			for _, m := range smc.StandardModels() {
				for _, s := range smc.Schemes() {
					for _, k := range smcSteeringK {
						// is has no expansion; fc-bisect at k = 1 is is (N' = N
						// keeps every particle); the planted bugs at k = 2 only.
						if (s.Name == "is" && k != 1) || (s.Name == "fc-bisect" && k == 1) || (s.Mutant && k != 2) {
							continue
						}
						cells = append(cells, Cell{Key: []KV{{K: "model", V: m.Name}, {K: "scheme", V: s.Name}, {K: "k", V: int64(k)}}})
					}
				}
			}
			return cells, nil
		},
		Run:     runSMCSteering,
		Figures: smcFigures(),
		Tables:  []Table{{Name: "smc-steering", Make: smcTable}},
		Numbers: []table.Number{
			{Macro: "SMCFcVar", Where: smcSlice("fc"), Col: "relative_variance", Digits: 4, Doc: "fc Var(Ẑ)/Z² at N = 64, K = 1"},
			{Macro: "SMCMultVar", Where: smcSlice("multinomial"), Col: "relative_variance", Digits: 4, Doc: "multinomial Var(Ẑ)/Z² at N = 64, K = 1"},
			{Macro: "SMCFcTV", Where: smcSlice("fc"), Col: "posterior_tv", Digits: 3, Doc: "fc posterior TV at N = 64, K = 1"},
			{Macro: "SMCMultTV", Where: smcSlice("multinomial"), Col: "posterior_tv", Digits: 3, Doc: "multinomial posterior TV at N = 64, K = 1"},
		},
	})
}

// smcFigures declares one figure per standard model, named
// smc-MODEL (the model's name in lower-case letters and digits joined
// by hyphens).
func smcFigures() []Figure {
	var out []Figure
	for _, m := range smc.StandardModels() {
		name := "smc-" + slug(m.Name)
		out = append(out, Figure{Name: name, Make: func(r []Row) (*plots.Figure, error) { return plots.SMCSteering(r, m.Name, name) }})
	}
	return out
}

// slug is s in lower-case letters and digits, other runs of characters
// made one hyphen ("forbid+end+expert" is forbid-end-expert, "expert^2"
// expert-2).
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
		} else {
			dash = true
		}
	}
	return b.String()
}

// smcModel is the smc-steering model the report draws and quotes: the
// first standard model (hard constraints with a soft expert).
const smcModel = "forbid+end+expert"

// smcSlice is smc-steering's row of one scheme at K = 1, N = 64 on the
// report's model.
func smcSlice(scheme string) []string {
	return []string{"model", smcModel, "scheme", scheme, "k", "1", "n", "64"}
}

func runSMCSteering(ctx context.Context, cfg Config, c Cell, seed uint64) ([]Row, error) {
	name, scheme := Row(c.Key).String("model"), Row(c.Key).String("scheme")
	kf, err := cellFloat(c, "k")
	if err != nil {
		return nil, err
	}
	var spec smc.ModelSpec
	for _, m := range smc.StandardModels() {
		if m.Name == name {
			spec = m
		}
	}
	if spec.Name == "" {
		return nil, fmt.Errorf("smc-steering: unknown model %q", name)
	}
	s, err := smc.LookupScheme(scheme)
	if err != nil {
		return nil, err
	}
	m, err := spec.Build(seed)
	if err != nil {
		return nil, err
	}
	ex, err := smc.Enumerate(m)
	if err != nil {
		return nil, err
	}
	runs := cfg.Trials(smcSteeringRuns)
	var rows []Row
	for _, n := range smcSteeringN {
		st, err := smc.Evaluate(ctx, m, ex, s, smc.Config{N: n, K: int(kf)}, runs, seed, fmt.Sprintf("smc-steering/n=%d", n), cfg.MC())
		if err != nil {
			return nil, err
		}
		rows = append(rows, Row{
			{K: "model", V: name}, {K: "scheme", V: scheme}, {K: "k", V: int64(kf)}, {K: "n", V: int64(n)}, {K: "mutant", V: s.Mutant},
			{K: "z_exact", V: ex.Z}, {K: "runs", V: st.Runs},
			{K: "z_ratio", V: st.ZRatio.Mean}, {K: "z_ratio_lo", V: st.ZRatio.Lo}, {K: "z_ratio_hi", V: st.ZRatio.Hi},
			{K: "relative_variance", V: st.ZRatio.StdDev * st.ZRatio.StdDev},
			{K: "posterior_tv", V: nanTo(st.TV.Mean)}, {K: "tv_lo", V: nanTo(st.TV.Lo)}, {K: "tv_hi", V: nanTo(st.TV.Hi)},
			{K: "mean_ess", V: st.ESS}, {K: "particles_mean", V: st.SizeMean}, {K: "particles_min", V: int64(st.SizeMin)}, {K: "particles_max", V: int64(st.SizeMax)},
			{K: "zero_runs", V: st.ZeroRuns},
		})
	}
	return rows, nil
}

// nanTo maps an undefined or infinite summary (no run with Ẑ > 0) to NaN
// so that tables and plots skip it.
func nanTo(x float64) float64 {
	if math.IsInf(x, 0) {
		return math.NaN()
	}
	return x
}

// smcTable is smc-steering per model and scheme: the relative variance
// and the posterior TV at the largest N for each K, and how many of the
// (N, K) intervals of the mean Ẑ/Z cover 1 (about 95% of them for an
// unbiased scheme).
func smcTable(rows []Row) table.Text {
	ks := []int64{1, 2, 4}
	nMax := int64(smcSteeringN[len(smcSteeringN)-1])
	t := table.Text{Caption: fmt.Sprintf("SMC steering against exact enumeration per model and resampling scheme (planted bugs last, at K = 2 only): the relative variance Var(Ẑ)/Z² and the posterior TV at N = %d for each expansion factor K (n/a: the scheme does not run at that K), "+
		"and how many of the 95%% intervals of the mean Ẑ/Z over the runs cover 1, over every N and K (an unbiased scheme: about 95%% of them).", nMax),
		Header: []string{"model", "scheme", "Var(Ẑ)/Z² K=1", "K=2", "K=4", "TV K=1", "K=2", "K=4", "Ẑ/Z ∋ 1"},
		Right:  table.RightCols(9, 2, 3, 4, 5, 6, 7, 8)}
	type key struct{ model, scheme string }
	var order []key
	at := map[key]map[int64]Row{}
	cover, total := map[key]int{}, map[key]int{}
	for _, r := range rows {
		k := key{r.String("model"), r.String("scheme")}
		if _, ok := at[k]; !ok {
			order = append(order, k)
			at[k] = map[int64]Row{}
		}
		lo, hi := table.Num(r, "z_ratio_lo"), table.Num(r, "z_ratio_hi")
		total[k]++
		if lo <= 1 && 1 <= hi {
			cover[k]++
		}
		if n, _ := r.Float("n"); int64(n) == nMax {
			kk, _ := r.Float("k")
			at[k][int64(kk)] = r
		}
	}
	// per model (in run order), its correct schemes, then its planted bugs
	models := map[string]int{}
	for _, k := range order {
		if _, ok := models[k.model]; !ok {
			models[k.model] = len(models)
		}
	}
	slices.SortStableFunc(order, func(a, b key) int {
		if d := models[a.model] - models[b.model]; d != 0 {
			return d
		}
		return boolInt(strings.HasPrefix(a.scheme, "mutant")) - boolInt(strings.HasPrefix(b.scheme, "mutant"))
	})
	for _, k := range order {
		row := []string{k.model, k.scheme}
		for _, col := range []struct {
			name string
			d    int
		}{{"relative_variance", 4}, {"posterior_tv", 3}} {
			for _, kk := range ks {
				cell := NA
				if r, ok := at[k][kk]; ok {
					cell = dec(r, col.name, col.d)
				}
				row = append(row, cell)
			}
		}
		row = append(row, fmt.Sprintf("%d/%d", cover[k], total[k]))
		t.Rows = append(t.Rows, row)
	}
	return t
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
