package algos

import (
	"cmp"
	"context"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/draft"
)

// TestKSeqRhoSplit checks the sampler's kseqRhoFast against KSeqRho's
// direct bisection on 400 random pairs (V from 2 to 3,000, zeros planted in
// p and q, peaked and flat rows, m = 1…8): ρ* and b(ρ*) agree to 1e-9
// relative (they differ only by the order of the additions), and at m = 1
// ρ* = 1 whatever the pair, which KSeq.step relies on to skip the search.
// Every other pair is stored as float32 rows, which take the kernels'
// float32 path, whose error kseqMargin covers.
func TestKSeqRhoSplit(t *testing.T) {
	rng := sim.NewRand(7, sim.StreamID("kseq-split"))
	for trial := range 400 {
		v := 2 + rng.IntN(3000)
		if trial%4 == 0 {
			v = 2 + rng.IntN(6)
		}
		p := randRow(rng, v, 1+3*rng.Float64(), rng.IntN(v/2+1))
		q := randRow(rng, v, 1+3*rng.Float64(), rng.IntN(v/2+1))
		m := 1 + trial%8
		pr, qr := sim.F64(p), sim.F64(q)
		if trial%2 == 1 { // float32 rows: the kernels' float32 path
			pr, qr = sim.F32(toF32(p)), sim.F32(toF32(q))
		}
		rho, b := kseqRhoFast(pr, qr, m)
		rho0, b0 := KSeqRho(pr, qr, m)
		if math.Abs(rho-rho0) > 1e-9*rho0 || math.Abs(b-b0) > 1e-9*math.Max(b0, 1e-300) {
			t.Fatalf("trial %d V=%d m=%d: split gives ρ* = %.17g, b = %.17g; direct %.17g, %.17g", trial, v, m, rho, b, rho0, b0)
		}
		if m == 1 && rho != 1 {
			t.Fatalf("trial %d: ρ* = %g at m = 1", trial, rho)
		}
	}
}

func toF32(p []float64) []float32 {
	r := make([]float32, len(p))
	for i, v := range p {
		r[i] = float32(v)
	}
	return r
}

// TestSampleMassBlocks checks that the block-summed inverse-CDF sampler
// returns sampleMass's index: 2,000 weight vectors (lengths across block
// boundaries, zeros and negative entries, an all-zero vector) at 50
// uniforms each, the same index for every uniform but 0 and the largest
// below 1, where it returns one of positive weight (or -1 for no mass).
func TestSampleMassBlocks(t *testing.T) {
	rng := sim.NewRand(9, sim.StreamID("sample-mass-blocks"))
	for trial := range 2000 {
		n := 1 + rng.IntN(3*massBlock)
		if trial%10 == 0 {
			n = 1 + rng.IntN(40000)
		}
		w := make([]float64, n)
		for i := range w {
			switch rng.IntN(4) {
			case 0:
			case 1:
				w[i] = -rng.Float64()
			default:
				w[i] = rng.ExpFloat64()
			}
		}
		if trial == 0 {
			clear(w)
		}
		for k := range 50 {
			u := rng.Float64()
			switch k {
			case 0:
				u = 0
			case 1:
				u = math.Nextafter(1, 0)
			}
			got, want := sampleMassBlocks(u, w), sampleMass(u, w)
			if k < 2 && (got < 0 && want < 0 || got >= 0 && w[got] > 0) {
				continue // u = 0 or 1-: the sums' rounding order decides; a token of positive weight
			}
			if got != want {
				t.Fatalf("trial %d n=%d u=%.17g: %d, sampleMass %d", trial, n, u, got, want)
			}
		}
	}
}

// BenchmarkTreeRules times every tree rule on the tree benchmark's
// workload at V = 32,000, k = 4 (SpecHub's hub pair: 2), depth 4 (what
// `simulate bench` runs), one second each:
// go test ./algos -run '^$' -bench TreeRules -cpuprofile.
func BenchmarkTreeRules(b *testing.B) {
	for _, e := range AllTree() {
		b.Run(e.Name, func(b *testing.B) {
			k := draft.K(0, e.Draft.String()) // 4, or the drafter's limit (SpecHub: 2), as bench
			r, err := BenchTree(context.Background(), e, TreeBenchConfig{V: 32000, K: k, Depth: 4, Beta: 0.7, Duration: time.Second, Seed: 1})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(r.TreesPerCPUSecond, "trees/cpu-s")
		})
	}
}

// TestKSeqSample checks K-SEQ's sampling path against the one it replaced:
// on 300 random pairs (V up to 3,000 and past the block length, zeros
// planted, m = 1…6) and at 50 uniforms each (0 and the largest below 1
// among them), kseqSample returns the token sampleMass draws from
// kseqResidual's row (which the law uses): the same token for the same
// uniform, but at u = 0 and u = 1- (where the sums' rounding order
// decides) a token of positive weight.
func TestKSeqSample(t *testing.T) {
	rng := sim.NewRand(11, sim.StreamID("kseq-sample"))
	for trial := range 300 {
		v := 2 + rng.IntN(3000)
		p := randRow(rng, v, 1+3*rng.Float64(), rng.IntN(v/2+1))
		q := randRow(rng, v, 1+3*rng.Float64(), rng.IntN(v/2+1))
		m := 1 + trial%6
		rho, b := kseqRhoFast(sim.F64(p), sim.F64(q), m)
		w := make([]float64, v)
		kseqResidual(w, sim.F64(p), sim.F64(q), rho, b, m)
		for k := range 50 {
			u := rng.Float64()
			switch k {
			case 0:
				u = 0
			case 1:
				u = math.Nextafter(1, 0)
			}
			got, want := kseqSample(u, sim.F64(p), sim.F64(q), rho, b, m), sampleMass(u, w)
			if k < 2 && got >= 0 && w[got] > 0 {
				continue // u = 0 or 1-: the token may differ by the sums' rounding, but has mass
			}
			if got != want {
				t.Fatalf("trial %d V=%d m=%d u=%.17g: token %d, the direct path's %d", trial, v, m, u, got, want)
			}
		}
	}
}

// TestMentoredCollect checks that the solve's one pass returns rowKL's
// KL(p‖q) bit for bit, the tokens sorted by ρ and the prefix sums of p, q
// and p·log ρ in that order (every tenth pair with at least radixMin
// tokens, where index sums as it gathers; every third in float32), on 300
// random pairs with zeros in p and q and a draft entry small enough that
// p/q overflows (where rowKL is +Inf and the term leaves cc out).
func TestMentoredCollect(t *testing.T) {
	rng := sim.NewRand(13, sim.StreamID("mentored-collect"))
	for trial := range 300 {
		v := 2 + rng.IntN(500)
		if trial%10 == 0 { // index's counting-pass path
			v = radixMin + rng.IntN(30000)
		}
		p := randRow(rng, v, 1+3*rng.Float64(), rng.IntN(v/2+1))
		q := randRow(rng, v, 1+3*rng.Float64(), rng.IntN(v/2+1))
		if trial%5 == 0 {
			q[rng.IntN(v)] = 5e-324
		}
		pr, qr := sim.F64(p), sim.F64(q)
		if trial%3 == 1 { // float32 rows: collect32's loop
			pr, qr = sim.F32(toF32(p)), sim.F32(toF32(q))
		}
		sc := new(mscratch)
		kl := sc.collect(pr, qr)
		if want := rowKL(pr, qr); math.Float64bits(kl) != math.Float64bits(want) {
			t.Fatalf("trial %d: collect KL %.17g, rowKL %.17g", trial, kl, want)
		}
		sc.index()
		c, cp, cq, z := 0.0, 0.0, 0.0, 0
		for i, it := range sc.it {
			if i > 0 && sc.it[i-1].r > it.r {
				t.Fatalf("trial %d: ρ %.17g after %.17g", trial, it.r, sc.it[i-1].r)
			}
			if it.r > 0 && !math.IsInf(it.r, 1) {
				c += it.p * math.Log(it.r)
			}
			cp += it.p
			cq += it.q
			if it.r == 0 {
				z = i + 1
			}
			if sc.cc[i+1] != c || sc.cp[i+1] != cp || sc.cq[i+1] != cq {
				t.Fatalf("trial %d: prefix %d = (%.17g, %.17g, %.17g), the sums of p, q, p·log ρ (%.17g, %.17g, %.17g)",
					trial, i+1, sc.cp[i+1], sc.cq[i+1], sc.cc[i+1], cp, cq, c)
			}
		}
		if sc.z != z {
			t.Fatalf("trial %d: z = %d, %d tokens have p = 0", trial, sc.z, z)
		}
	}
}

// TestMentoredSortByRatio checks that the counting-pass sort (token counts
// from radixMin up) gives the permutation of a stable sort by ρ: on rows
// with zeros, +Inf, exact ties and ρ that agree in the top bits the passes
// read (so the index bits of the keys and the insertion pass decide), each
// item tagged with its collection index so that the order of ties is
// checked too.
func TestMentoredSortByRatio(t *testing.T) {
	rng := sim.NewRand(14, sim.StreamID("mentored-sort"))
	for _, n := range []int{radixMin, radixMin + 1, 5000, 32000} {
		sc := new(mscratch)
		for i := range n {
			var r float64
			switch rng.IntN(6) {
			case 0:
				r = 0
			case 1:
				r = math.Inf(1)
			case 2:
				r = float64(1 + rng.IntN(4)) // exact ties
			case 3: // equal top bits, different low mantissa bits
				r = math.Float64frombits(math.Float64bits(0.75) + uint64(rng.IntN(1<<radixLow)))
			default:
				r = math.Exp(20 * rng.NormFloat64())
			}
			sc.it = append(sc.it, item{r: r, p: float64(i)})
		}
		want := slices.Clone(sc.it)
		slices.SortStableFunc(want, func(x, y item) int { return cmp.Compare(x.r, y.r) })
		sc.sortByRatio()
		for i := range want {
			if sc.it[i] != want[i] {
				t.Fatalf("n = %d: position %d holds ρ %.17g (index %g), a stable sort %.17g (index %g)",
					n, i, sc.it[i].r, sc.it[i].p, want[i].r, want[i].p)
			}
		}
	}
}
