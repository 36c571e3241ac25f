package cli

import (
	"fmt"
	"io"
	"sort"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/experiments"
	"github.com/specsim/specsim/internal/cliutil"
	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/lm"
	"github.com/specsim/specsim/sim"
)

func init() { register(listCommand) }

// sourceSummaries are the one-line summaries of the source kinds
// (sim.SourceKinds) and of the n-gram corpora of 'simulate generate'
// (lm.Code, lm.Prose); TestListSources checks every kind has one.
var sourceSummaries = map[string]string{
	"dirichlet":   "synthetic pool: p ~ Dirichlet(a) per context and position, q a calibrated perturbation with mean sum min(p,q) = beta (V, a, beta, contexts, seed)",
	"temperature": "synthetic pool: Dirichlet(a) target, q = p at temperature T (V, a, T, contexts, seed)",
	"zipf":        "synthetic pool: Zipf target with exponent s on a random order, Zipf-like draft with exponent sq (V, s, sq, contexts, seed)",
	"markov":      "model pair: random Markov chains of order 1 or 2 (V, order, a, quality, seed); small V enumerates exactly",
	lm.Code:       "n-gram LM pair trained on the Go source tree (generate --corpus code)",
	lm.Prose:      "n-gram LM pair trained on /usr/share/common-licenses (generate --corpus prose)",
}

// sourceNames is the order 'list sources' prints.
func sourceNames() []string {
	return append(sim.SourceKinds(), lm.Code, lm.Prose)
}

func listCommand() *cli.Command {
	return &cli.Command{
		Name:      "list",
		Usage:     "list the acceptance rules (default), the experiments or the sources, each with a one-line summary",
		ArgsUsage: "[rules|experiments|sources]",
		Description: `simulate list (or list rules) prints every rule and mutant with its
parameters, strict points and whether it has an exact law; list experiments
prints the named experiments of 'simulate run' and 'report reproduce --only'
(* marks the main job's); list sources prints the --source kinds.`,
		Flags: []cli.Flag{jsonFlag(),
			&cli.BoolFlag{Name: "markdown", Usage: "print the README's rule table (markdown; list rules only)"}},
		Action: func(c *cli.Context) error {
			what := "rules"
			if c.NArg() > 1 {
				return diag.Usage(fmt.Errorf("list takes at most one of rules, experiments, sources; got %d arguments", c.NArg()))
			}
			if c.NArg() == 1 {
				what = c.Args().First()
			}
			switch what {
			case "rules":
				ds, err := algos.Catalog()
				switch {
				case err != nil:
					return err
				case c.Bool("json"):
					return cliutil.WriteJSON(c.App.Writer, ds)
				case c.Bool("markdown"):
					return algos.WriteMarkdown(c.App.Writer, ds)
				}
				return algos.WriteText(c.App.Writer, ds)
			case "experiments":
				return listExperiments(c.App.Writer, c.Bool("json"))
			case "sources":
				return listSources(c.App.Writer, c.Bool("json"))
			}
			return diag.Usage(fmt.Errorf("list %q: use rules, experiments or sources", what))
		},
	}
}

// listItem is one line of 'list experiments' (JSON: name, summary,
// main) and 'list sources' (JSON: name, summary).
type listItem struct {
	Name    string `json:"name"`
	Summary string `json:"summary"`
	// Main is true for the experiments 'report reproduce' runs (nil for
	// sources, whose JSON has no main).
	Main *bool `json:"main,omitempty"`
}

func listExperiments(w io.Writer, asJSON bool) error {
	main := map[string]bool{}
	for _, e := range experiments.MainJob() {
		main[e.Name] = true
	}
	var items []listItem
	for _, n := range experiments.Names() {
		e, _ := experiments.Lookup(n)
		m := main[n]
		items = append(items, listItem{Name: n, Summary: e.Summary, Main: &m})
	}
	sort.SliceStable(items, func(i, j int) bool { return items[i].Name < items[j].Name })
	return writeItems(w, asJSON, items, "* = in the main job (report reproduce)")
}

func listSources(w io.Writer, asJSON bool) error {
	var items []listItem
	for _, n := range sourceNames() {
		items = append(items, listItem{Name: n, Summary: sourceSummaries[n]})
	}
	return writeItems(w, asJSON, items, "simulate describe SOURCE prints a source's p and q, e.g. simulate describe markov:V=3,order=1")
}

func writeItems(w io.Writer, asJSON bool, items []listItem, foot string) error {
	if asJSON {
		return cliutil.WriteJSON(w, items)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, it := range items {
		mark := " "
		if it.Main != nil && *it.Main {
			mark = "*"
		}
		fmt.Fprintf(tw, "%s %s\t%s\n", mark, it.Name, it.Summary)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, foot)
	return err
}
