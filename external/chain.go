package external

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"

	"github.com/specsim/specsim/sim"
)

// batchOpts are a chain batch's settings beyond its blocks.
type batchOpts struct {
	seed  uint64
	coins string
	// seeds, when set, are the per-row seeds of a composed batch (-1:
	// unseeded); nil derives them from seed for the seeded kinds.
	seeds []int64
	// record keeps the batch's seeded rows for the determinism replay.
	record bool
	// got, when set, receives every row's emitted tokens and, when the
	// implementation returned them, its drafts (nil otherwise).
	got func(i int, emitted, drafts []int64)
}

// Steps implements sim.Stepper: one batch, one round trip. The batch's
// seed for the function's numpy.random.Generator is rng.Uint64().
func (im *Impl) Steps(rng *rand.Rand, bs []sim.Block, outs []sim.Outcome) error {
	return im.steps(batchOpts{seed: rng.Uint64(), coins: coinsRandom, record: true}, bs, outs)
}

// kindOf returns the row kind of a block of a composed run (Ctx = c·R + r
// of ComposePool) and the context of the raw pool, or -1 and Ctx.
func (im *Impl) kindOf(b *sim.Block) (kind, ctx int) {
	r := len(im.cfg.Rows)
	if r == 0 || b.Ctx < 0 {
		return -1, b.Ctx
	}
	return b.Ctx % r, b.Ctx / r
}

// rowSeed derives row i's seed from the batch seed (splitmix64), a
// non-negative int64.
func rowSeed(seed uint64, i int) int64 {
	z := seed + uint64(i+1)*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return int64((z ^ (z >> 31)) >> 1)
}

func (im *Impl) steps(o batchOpts, bs []sim.Block, outs []sim.Outcome) error {
	im.mu.Lock()
	defer im.mu.Unlock()
	if im.err != nil {
		return im.err
	}
	if im.cfg.Mode == Tree {
		panic("external: chain steps sent to an implementation in tree mode")
	}
	b, g, v := len(bs), im.cfg.Gamma, im.cfg.V
	k, first, where := im.next(b)
	if b == 0 {
		return nil
	}
	for i := range bs {
		if bs[i].Gamma() != g || len(bs[i].P) != g+1 || len(bs[i].Q) != g || bs[i].V() != v {
			panic(fmt.Sprintf("external: block %d has γ = %d, V = %d; the implementation was started with γ = %d, V = %d", i, bs[i].Gamma(), bs[i].V(), g, v))
		}
	}
	// The row kinds, draft lengths and seeds.
	kinds, gammas, seeds := im.rowKinds(o, b, func(i int) *sim.Block { return &bs[i] })
	h, pooled, fromModel := im.batchHeader(o, bs, k, first)
	im.drafts = im.drafts[:0]
	for i := range bs {
		for j, x := range bs[i].Tokens {
			if int64(j) >= gammas[i] {
				x = -1
			}
			im.drafts = append(im.drafts, int64(x))
		}
	}
	err := im.p.send(h, func(w io.Writer) error {
		return im.writeBatch(w, bs, pooled, fromModel, kinds, gammas, seeds)
	})
	if err != nil {
		return im.fail(fmt.Errorf("external: %s: %s: %v", im.name, where, err))
	}
	withDrafts, err := im.receiveSteps(k, b, first, where, gammas)
	if err != nil {
		return err
	}
	return im.judgeSteps(o, bs, outs, stepBatch{first: first, where: where, gammas: gammas, seeds: seeds, withDrafts: withDrafts, fromModel: fromModel})
}

// batchHeader is the header of batch k of the steps bs, whose first step
// is first: rows by pool context (pooled, every block's context in the
// pool), from the shipped model (fromModel: step mode with random coins
// on a Markov pair) or inline, and the arrays that follow.
func (im *Impl) batchHeader(o batchOpts, bs []sim.Block, k int, first int64) (h header, pooled, fromModel bool) {
	pooled = im.pool != nil
	for i := range bs {
		if _, c := im.kindOf(&bs[i]); c < 0 || c >= contexts(im.pool) {
			pooled = false
		}
	}
	fromModel = !pooled && im.pair != nil && im.cfg.Mode == Step && bs[0].Ctx < 0 && o.coins == coinsRandom
	h = header{Op: "batch", Batch: k, First: first, Size: len(bs), Seed: o.seed, Coins: o.coins}
	switch {
	case pooled:
		h.Rows, h.Arrays = "pool", []string{"ctx"}
	case fromModel:
		h.Rows, h.Arrays = "model", []string{}
	default:
		h.Rows, h.Arrays = "inline", []string{"p", "q"}
	}
	if im.cfg.Mode == Verify {
		h.Arrays = append(h.Arrays, "drafts")
	}
	if len(im.cfg.Rows) > 0 {
		h.Arrays = append(h.Arrays, perRowArrays(im.cfg.Rows)...)
	}
	return h, pooled, fromModel
}

// writeBatch writes the arrays of a batch of the steps bs after its
// header (batchHeader): the contexts or the rows, the drafts (verify
// mode) and the per-row arrays of a composed batch.
func (im *Impl) writeBatch(w io.Writer, bs []sim.Block, pooled, fromModel bool, kinds []int, gammas, seeds []int64) error {
	b, g, v := len(bs), im.cfg.Gamma, im.cfg.V
	var err error
	switch {
	case pooled:
		im.ctx = im.ctx[:0]
		for i := range bs {
			_, c := im.kindOf(&bs[i])
			im.ctx = append(im.ctx, int64(c))
		}
		if im.scratch, err = writeI64(w, []int{b}, im.ctx, im.scratch); err != nil {
			return err
		}
	case fromModel:
	default:
		for _, part := range []struct {
			n int
			q bool
		}{{g + 1, false}, {g, true}} {
			buf := im.rows[:0]
			for i := range bs {
				rows := bs[i].P
				if part.q {
					rows = bs[i].Q
				}
				for _, r := range rows {
					im.row = rowF32(im.row, r)
					buf = im.appendRow(buf, im.row)
				}
			}
			im.rows = buf
			if im.scratch, err = writeF32(w, []int{b, part.n, v}, buf, im.scratch); err != nil {
				return err
			}
		}
	}
	if im.cfg.Mode == Verify {
		if im.scratch, err = writeI64(w, []int{b, g}, im.drafts, im.scratch); err != nil {
			return err
		}
	}
	if len(im.cfg.Rows) > 0 {
		return im.writePerRow(w, kinds, gammas, seeds)
	}
	return nil
}

// receiveSteps reads the answer to batch k of b steps (the first is
// first): the emitted tokens, with the sampler's drafts in step mode
// where it returns them (withDrafts; they replace im.drafts once
// checked). Its errors are im.fail's.
func (im *Impl) receiveSteps(k, b int, first int64, where string, gammas []int64) (withDrafts bool, err error) {
	g, v := im.cfg.Gamma, im.cfg.V
	opts := [][]string{{"emitted"}}
	if im.cfg.Mode == Step {
		opts = [][]string{{"drafts", "emitted"}}
		if im.version >= 2 {
			opts = append(opts, []string{"emitted"})
		}
	}
	rh, got, err := im.p.recvOneOf(opts, map[string]*array{"drafts": &im.sampled, "emitted": &im.emitted},
		map[string][]int{"drafts": {b, g}, "emitted": {b, g + 1}})
	if err == nil && (rh.Op != "result" || rh.Batch != k) {
		err = fmt.Errorf("the answer is %q for batch %d, want \"result\" for batch %d", rh.Op, rh.Batch, k)
	}
	if err != nil {
		return false, im.fail(fmt.Errorf("external: %s: %s: %v", im.name, where, err))
	}
	withDrafts = im.cfg.Mode == Verify || len(got) == 2
	if !withDrafts && im.needDrafts {
		return false, im.fail(fmt.Errorf("external: %s: %s: the answer carries no drafts, and a conformance test judges the outcome given the drafts; return (drafts, emitted)", im.name, where))
	}
	if im.cfg.Mode == Step && withDrafts {
		if err := checkShape("drafts", &im.sampled, b, g); err != nil {
			return false, im.fail(fmt.Errorf("external: %s: %s: %v", im.name, where, err))
		}
		for i := range b {
			for j := 0; j < g; j++ {
				x := im.sampled.I64[i*g+j]
				if int64(j) >= gammas[i] && x == -1 {
					continue
				}
				if x < 0 || x >= int64(v) {
					return false, im.fail(fmt.Errorf("external: %s: %s, step %d: drafts[%d, %d] = %d is outside the vocabulary [0, %d) (drafts are optional in step mode: return emitted alone when the sampler has no chain of drafts)", im.name, where, first+int64(i), i, j, x, v))
				}
			}
		}
		copy(im.drafts, im.sampled.I64)
	}
	if err := checkShape("emitted", &im.emitted, b, g+1); err != nil {
		return false, im.fail(fmt.Errorf("external: %s: %s: %v", im.name, where, err))
	}
	return withDrafts, nil
}

// stepBatch is what judgeSteps needs of a batch beyond its blocks: its
// first step and place (for messages), the rows' draft lengths and seeds,
// whether the answer carried drafts and whether the rows came from the
// shipped model.
type stepBatch struct {
	first         int64
	where         string
	gammas, seeds []int64
	withDrafts    bool
	fromModel     bool
}

// judgeSteps decodes each step's answer into outs: an outcome, or an
// invalid one recorded with its reason (a step mode sampler's changed
// drafts are a broken contract); seeded rows are kept for the
// determinism replay.
func (im *Impl) judgeSteps(o batchOpts, bs []sim.Block, outs []sim.Outcome, sb stepBatch) error {
	g, v := im.cfg.Gamma, im.cfg.V
	for i := range bs {
		row := im.emitted.I64[i*(g+1) : (i+1)*(g+1)]
		var drafts []int64
		if sb.withDrafts {
			drafts = im.drafts[i*g : (i+1)*g]
		}
		out, inv, err := decodeRow(row, drafts, int(sb.gammas[i]), v)
		if err != nil {
			return im.fail(fmt.Errorf("external: %s: %s, step %d (row %d): %v", im.name, sb.where, sb.first+int64(i), i, err))
		}
		step := fmt.Sprintf("%s, step %d (row %d): emitted %v", sb.where, sb.first+int64(i), i, trim(row))
		judged := drafts // the drafts the outcome is judged with
		if inv == invChanged && im.cfg.Mode == Step && !im.needDrafts {
			// the sampler's own drafts: a broken contract, not a law
			im.broken.add(fmt.Sprintf("%s, drafts %v", step, trim(drafts)))
			inv, judged = "", nil
		}
		if inv == "" && im.cfg.Mode == Step {
			inv = im.adopt(&bs[i], row, judged, out, sb.fromModel)
		}
		if inv != "" {
			if drafts != nil {
				step += fmt.Sprintf(", drafts %v", trim(drafts))
			}
			im.invalid.add(inv, step)
			out = sim.Outcome{Accepted: -1, Next: sim.NoToken}
		}
		outs[i] = out
		if o.got != nil {
			o.got(i, row, drafts)
		}
		if o.record && sb.seeds[i] >= 0 {
			im.det.keep(bs[i], sb.seeds[i], sb.first+int64(i), row, drafts)
		}
	}
	return nil
}

// writePerRow writes a composed batch's per-row arrays (perRowArrays).
func (im *Impl) writePerRow(w io.Writer, kinds []int, gammas, seeds []int64) error {
	b := len(kinds)
	temp, topP, minP := make([]float64, b), make([]float64, b), make([]float64, b)
	topK := make([]int64, b)
	for i, k := range kinds {
		s := defaultRow.Sampling
		if k >= 0 {
			s = im.cfg.Rows[k].Sampling
		}
		temp[i], topK[i], topP[i], minP[i] = s.Temperature, int64(s.TopK), s.TopP, s.MinP
	}
	var err error
	for _, a := range []any{temp, topK, topP, minP, gammas, seeds} {
		switch x := a.(type) {
		case []float64:
			im.scratch, err = writeF64(w, []int{b}, x, im.scratch)
		case []int64:
			im.scratch, err = writeI64(w, []int{b}, x, im.scratch)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// defaultRow is the row kind of the edge-case rows of a composed run.
var defaultRow = RowConfig{Sampling: samplingOff}

// adopt makes a step-mode block hold what the implementation did: its
// drafts (when returned) or its accepted path as the block's tokens, with
// the model pair's rows along them (a pool's rows are positional and stay).
// Under a conformance test it returns the kind of invalid outcome when a
// draft has draft probability 0, or "". fromModel says the block's rows are the harness's
// chain over the model pair the implementation drafted from.
func (im *Impl) adopt(b *sim.Block, row, drafts []int64, o sim.Outcome, fromModel bool) string {
	if drafts != nil {
		for j := range b.Tokens {
			if drafts[j] >= 0 {
				b.Tokens[j] = int(drafts[j])
			}
		}
	} else {
		for j := 0; j < o.Accepted; j++ {
			b.Tokens[j] = int(row[j])
		}
	}
	n := len(b.Tokens)
	if drafts == nil {
		n = o.Accepted
	}
	if fromModel {
		// A model pair: the rows of the block are those of the harness's
		// own chain; replace them by the rows along the implementation's
		// tokens.
		for j := 0; j <= len(b.Tokens); j++ {
			im.path = append(im.path[:0], b.Tokens[:j]...)
			sim.CopyRow(&b.P[j], sim.F64(im.mp.Rows[im.mp.State(im.path)]))
			if j < len(b.Tokens) {
				sim.CopyRow(&b.Q[j], sim.F64(im.mq.Rows[im.mq.State(im.path)]))
			}
		}
	}
	if drafts != nil && im.needDrafts {
		// A conformance test presumes drafts drawn from q; the lossless
		// check does not (drafts may come from any law: an n-gram lookup
		// verified as point masses is lossless).
		for j := 0; j < n; j++ {
			if drafts[j] >= 0 && b.Q[j].At(b.Tokens[j]) <= 0 {
				return invQZero
			}
		}
	}
	return ""
}

// trim returns row without its trailing -1 padding.
func trim(row []int64) []int64 {
	n := len(row)
	for n > 0 && row[n-1] == -1 {
		n--
	}
	return row[:n]
}

// errNoToken is a row that emits nothing.
var errNoToken = errors.New("emitted row is all -1; a step emits at least the correction or bonus token")

// decodeRow turns one emitted row (accepted drafts, the correction or
// bonus token, -1 padding) into an Outcome: k leading tokens give
// Accepted = k-1 and Next = row[k-1]. Malformed rows are errors: a token
// outside [0, V), a token after -1 padding, a row of -1 only. Rows a
// correct sampler never emits are invalid outcomes, returned as their
// kind: more than gamma+1 tokens (gamma being the row's draft length), or
// an accepted prefix that is not the drafts (when drafts is not nil).
func decodeRow(row, drafts []int64, gamma, v int) (sim.Outcome, string, error) {
	k := 0
	for k < len(row) && row[k] != -1 {
		k++
	}
	for j := range row {
		x := row[j]
		switch {
		case j >= k && x != -1:
			return sim.Outcome{}, "", fmt.Errorf("emitted token %d at position %d follows -1 padding at position %d; pad only at the end", x, j, k)
		case j < k && (x < 0 || x >= int64(v)):
			return sim.Outcome{}, "", fmt.Errorf("emitted token %d at position %d is outside the vocabulary [0, %d) (pad with -1)", x, j, v)
		}
	}
	if k == 0 {
		return sim.Outcome{}, "", errNoToken
	}
	o := sim.Outcome{Accepted: k - 1, Next: int(row[k-1])}
	if k > gamma+1 {
		return o, invTooLong, nil
	}
	if drafts != nil {
		for j := 0; j < k-1; j++ {
			if row[j] != drafts[j] {
				return o, invChanged, nil
			}
		}
	}
	return o, "", nil
}
