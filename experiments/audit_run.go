package experiments

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/specsim/specsim/internal/diag"
)

// AuditOptions configures RunAudit ('simulate audit').
type AuditOptions struct {
	Seed    uint64
	Workers int
	// Scale multiplies the statistical trial count; it must be positive.
	Scale float64
	// Progress, if set, receives the rules done after each.
	Progress func(done, total int64)
	// Log, if set, receives the header line once the options are valid.
	Log io.Writer
}

// RunAudit runs every cell of the audit in order and returns its rows,
// each prefixed with the experiment and the cell and ending with the
// seed. Errors are marked with their kind (internal/diag): usage for a bad
// scale, interrupted when ctx is cancelled.
func RunAudit(ctx context.Context, o AuditOptions) ([]Row, error) {
	if err := CheckScale("scale", o.Scale); err != nil {
		return nil, err
	}
	if o.Log != nil {
		fmt.Fprintf(o.Log, "simulate: audit, seed %d; exact pairs, then %s (gamma %d)\n", o.Seed, AuditSource, auditGamma)
	}
	e, err := Lookup("audit")
	if err != nil {
		return nil, err
	}
	cells, err := e.Cells(Config{})
	if err != nil {
		return nil, err
	}
	cfg := Config{Seed: o.Seed, Workers: o.Workers, Scale: o.Scale}
	var rows []Row
	for i, cell := range cells {
		rs, err := e.Run(ctx, cfg, cell, CellSeed(o.Seed, e.Name, cell))
		if err != nil {
			if ctx.Err() != nil {
				return rows, diag.Interrupted(fmt.Errorf("interrupted after %d of %d rules", i, len(cells)))
			}
			return rows, err
		}
		for _, r := range rs {
			rows = append(rows, Prefix(e.Name, cell, append(r, KV{K: "seed", V: int64(o.Seed)})))
		}
		if o.Progress != nil {
			o.Progress(int64(i+1), int64(len(cells)))
		}
	}
	return rows, nil
}

// AuditRules is the number of cells (rules and mutants) of the audit.
func AuditRules() int {
	e, err := Lookup("audit")
	if err != nil {
		return 0
	}
	cells, _ := e.Cells(Config{})
	return len(cells)
}

// AuditVerdict is nil when every audit row has the expected verdict, and
// otherwise a Violated error listing the rows that differ.
func AuditVerdict(rows []Row) error {
	var bad []string
	for _, r := range rows {
		if ok, _ := r.Get("ok"); ok != true {
			bad = append(bad, fmt.Sprintf("%s %s: %s, expected %s", r.String("algorithm"), r.String("params"), r.String("verdict"), r.String("expected")))
		}
	}
	if len(bad) > 0 {
		return diag.Violated(fmt.Errorf("audit: %d verdicts differ from expectation: %s", len(bad), strings.Join(bad, "; ")))
	}
	return nil
}

// WriteAuditText prints audit rows as an aligned table, one rule per line.
func WriteAuditText(w io.Writer, rows []Row) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	// the Monte Carlo and exact columns come from different sources and γ:
	// each header says which (see AuditTable's caption in package report)
	fmt.Fprintf(tw, "ALGORITHM\tPARAMS\tKIND\tEXACT\tMAX_ERR\tSTAT\tP\tEDGE\tALPHA_HAT(MC,g=%d)\tE[EMIT](MC,g=%d)\tE[EMIT](EXACT,g=%d)\tVERDICT\tOK\n",
		AuditStatGamma, AuditStatGamma, AuditEmittedGamma)
	for _, r := range rows {
		f := func(k string) string {
			v, _ := r.Float(k)
			return fmt.Sprintf("%.3g", v)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%v\n", r.String("algorithm"), r.String("params"), r.String("kind"),
			r.String("exact_verdict"), f("max_abs_error"), r.String("statistical_verdict"), f("p_value"), r.String("edge_verdict"),
			f("alpha_hat"), f("mean_emitted"), f("expected_emitted"), r.String("verdict"), r.String("ok"))
	}
	return tw.Flush()
}
