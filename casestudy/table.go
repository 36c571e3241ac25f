package casestudy

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/specsim/specsim/table"
)

// ResultsJSON is results/results.json, the committed output of run.py.
//
//go:embed results/results.json
var ResultsJSON []byte

// Results is results.json: the command, specsim revision and date that
// made it, and one row per sampler and commit.
type Results struct {
	Command  string   `json:"command"`
	Revision string   `json:"revision"`
	Date     string   `json:"date"`
	Rows     []Result `json:"rows"`
}

// Result is one sampler at one commit, as run.py wrote it.
type Result struct {
	Name            string   `json:"name"`
	Role            string   `json:"role"`
	Repo            string   `json:"repo"`
	Commit          string   `json:"commit"`
	Mode            string   `json:"mode"`
	Trials          int      `json:"trials"`
	Status          string   `json:"status"`
	Verdict         string   `json:"verdict"`
	PHolm           *float64 `json:"p_holm"`
	MinDetectableTV *float64 `json:"min_detectable_tv"`
	EdgeVerdict     string   `json:"edge_verdict"`
	Error           string   `json:"error"`
}

// Load decodes the embedded results.
func Load() (Results, error) {
	var r Results
	if err := json.Unmarshal(ResultsJSON, &r); err != nil {
		return r, fmt.Errorf("casestudy/results/results.json: %v", err)
	}
	return r, nil
}

// exception finds the Python exception class in an error line.
var exception = regexp.MustCompile(`\b([A-Z][A-Za-z]*Error)\b`)

// outcome is a row's verdict, or for a run that ended on an error the
// exception it raised (the harness prints the line; the table names it).
func (r Result) outcome() string {
	switch {
	case r.Status == "checked":
		return strings.ReplaceAll(r.Verdict, "_", " ")
	case r.Status == "error":
		if m := exception.FindStringSubmatch(r.Error); m != nil {
			return "raised " + m[1]
		}
		return "error"
	}
	return r.Status
}

// Table returns the results as the paper's table "casestudy": per sampler
// and commit, the mode, trials, verdict, smallest Holm-adjusted p, the
// minimum detectable TV at the run's level and power, and the edge cases'
// verdict ("-" where the run ended before a verdict).
func Table(res Results) table.Text {
	t := table.Text{Name: "casestudy",
		Caption: "Public samplers at a buggy and a fixed commit, checked by check --external",
		Header:  []string{"sampler", "commit", "role", "mode", "trials", "verdict", "p (Holm)", "min. TV", "edge cases"},
		Right:   []bool{false, false, false, false, true, false, true, true, false}}
	for _, r := range res.Rows {
		t.Rows = append(t.Rows, []string{r.Name, r.Commit[:min(7, len(r.Commit))], r.Role, r.Mode,
			trials(r), r.outcome(), float(r.PHolm, "%.2g"), float(r.MinDetectableTV, "%.4f"), dash(strings.ReplaceAll(r.EdgeVerdict, "_", " "))})
	}
	return t
}

func trials(r Result) string {
	if r.Status != "checked" {
		return "-"
	}
	return fmt.Sprintf("%d", r.Trials)
}

func float(v *float64, f string) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf(f, *v)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
