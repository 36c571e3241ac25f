package resolve

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/internal/escape"
	"github.com/specsim/specsim/internal/fsutil"
	"github.com/specsim/specsim/plots"
)

// WriteReport writes a check's report as a small page in dir: check.md
// (the claim, the verdict, each row kind's verdict (Result.RowKinds),
// where the emitted law departs most from the
// hypothesis, the tests with their detectable TVs, and the rules the
// outcomes look like) and, for a losslessness check with a profile, the
// figure check-profile.{png,svg,pdf} of observed against expected mass
// per position. It returns the files written.
func WriteReport(dir string, rep Report) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, diag.IO(err)
	}
	var b bytes.Buffer
	md := escape.Markdown
	fmt.Fprintf(&b, "# Check of %s on %s\n\n", md(rep.Algorithm), md(rep.Source))
	fmt.Fprintf(&b, "γ = %d, %d trials, seed %d, mode %s.\n\n", rep.Gamma, rep.Trials, rep.Seed, md(rep.Mode))
	fmt.Fprintf(&b, "**%s**\n\n", md(rep.Claim))
	fmt.Fprintf(&b, "Verdict: `%s` (smallest Holm-adjusted p = %.4g at level %g; invalid outcomes %d; edge cases %s).\n\n", rep.Verdict, rep.PValue, rep.Level, rep.Invalid, rep.Edge)
	for _, a := range rep.Assumptions {
		fmt.Fprintf(&b, "Assumption not met: %s.\n\n", md(a))
	}
	if len(rep.RowKinds) > 0 {
		b.WriteString("## Row kinds\n\nEvery test again on each row kind's trials, in one Holm family with the pooled tests.\n\n| row kind | verdict | smallest Holm p | detects TV ≥ | trials | invalid | note |\n|---|---|---:|---:|---:|---:|---|\n")
		for _, k := range rep.RowKinds {
			fmt.Fprintf(&b, "| %s | %s | %.3g | %.3g | %d | %d | %s |\n", md(k.Kind), k.Verdict, k.PHolm, k.MinDetTV, k.Trials, k.Invalid, md(k.Note))
		}
		b.WriteString("\n")
	}
	if len(rep.Where) > 0 {
		b.WriteString("## Where\n\nThe cells of the rejecting tests whose counts depart most from the hypothesis (z: standardised residual).\n\n| test | cell | observed | expected | z |\n|---|---|---:|---:|---:|\n")
		for _, d := range rep.Where {
			fmt.Fprintf(&b, "| %s | %s | %d | %.1f | %.1f |\n", md(d.Test), md(d.Where), d.Observed, d.Expected, d.Z)
		}
		b.WriteString("\n")
	}
	if rep.Resembles != nil {
		b.WriteString("## Which known bug it resembles\n\nThe catalogued bugs shown by a rejecting rows-of-a-batch test (no log-likelihood gap claimed), then those whose laws beat the best lossless rule's log-likelihood by more than chance, best first (none: no known bug fits).\n\n| bug | thread | log-likelihood above the next |\n|---|---|---:|\n")
		for _, r := range rep.Resembles {
			gap := "none claimed (" + md(r.Test) + ")"
			if r.LogLikGap != nil {
				gap = fmt.Sprintf("%.4g", *r.LogLikGap)
			}
			fmt.Fprintf(&b, "| %s | %s | %s |\n", md(r.Bug), md(r.Thread), gap)
		}
		b.WriteString("\n")
	}
	if len(rep.Fits) > 0 {
		b.WriteString("## Which rule the outcomes look like\n\nMean log-likelihood of each step's outcome given its drafts under each rule's exact law (higher is closer).\n\n| rule | lossless | mean log-likelihood | steps |\n|---|---|---:|---:|\n")
		for _, f := range rep.Fits[:min(len(rep.Fits), 8)] {
			fmt.Fprintf(&b, "| %s | %v | %.4g | %d |\n", md(f.Name), f.Lossless, f.MeanLogLik, f.Steps)
		}
		b.WriteString("\n")
	}
	var files []string
	if len(rep.Profile) > 0 {
		fig, err := plots.CheckProfile("check-profile", fmt.Sprintf("Check of %s on %s", rep.Algorithm, rep.Source), rep.Profile)
		if err != nil {
			return nil, err
		}
		for _, ext := range []string{"png", "svg", "pdf"} {
			p := filepath.Join(dir, "check-profile."+ext)
			if err := fig.Save(p); err != nil {
				return files, diag.IO(err)
			}
			files = append(files, p)
		}
		fmt.Fprintf(&b, "## Observed against expected, per position\n\n![profile](check-profile.png)\n\n%s\n\n", md(fig.Caption))
	}
	b.WriteString("## Tests\n\n| test | p | Holm p | detects TV ≥ (power " + fmt.Sprint(rep.Power) + ") | quantity |\n|---|---:|---:|---:|---|\n")
	for _, t := range rep.Tests {
		fmt.Fprintf(&b, "| %s | %.3g | %.3g | %.3g | %s |\n", md(t.Name), t.PValue, t.PHolm, t.MinDetTV, md(t.Quantity))
	}
	p := filepath.Join(dir, "check.md")
	if err := fsutil.WriteBytes(p, b.Bytes(), 0o644); err != nil {
		return files, diag.IO(err)
	}
	return append([]string{p}, files...), nil
}

// ReportFiles are the files WriteReport writes into its directory (the
// profile figures only when the report has a profile).
var ReportFiles = []string{"check.md", "check-profile.png", "check-profile.svg", "check-profile.pdf"}

// CheckReportDir checks, before a check runs, that WriteReport can write
// into dir: it is a directory or does not exist yet (then the nearest
// existing directory above it is the one written), a file can be created
// in it (a probe, removed at once: a read-only directory or mount is
// refused), and none of ReportFiles there is a FIFO, device, directory or
// lock file. Errors are usage errors naming --report; the check's own
// exit code is then never lost to a report that could not be written.
func CheckReportDir(dir string) error {
	bad := func(err error) error { return diag.Usage(fmt.Errorf("--report %s: %v", dir, err)) }
	if err := fsutil.CheckOutputDir(dir); err != nil {
		return bad(err)
	}
	probeDir := dir
	for {
		st, err := os.Stat(probeDir)
		if err == nil {
			if !st.IsDir() {
				return bad(fmt.Errorf("%s is not a directory, so the report directory cannot be created", probeDir))
			}
			break
		}
		up := filepath.Dir(probeDir)
		if up == probeDir {
			return bad(err)
		}
		probeDir = up
	}
	f, err := os.CreateTemp(probeDir, ".specsim-probe-*")
	if err != nil {
		return bad(fmt.Errorf("cannot create a file in %s (%v); give a writable directory", probeDir, err))
	}
	f.Close()
	os.Remove(f.Name())
	for _, name := range ReportFiles {
		if err := fsutil.CheckOutput(filepath.Join(dir, name)); err != nil {
			return bad(err)
		}
	}
	return nil
}
