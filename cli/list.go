package cli

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/experiments"
	"github.com/specsim/specsim/internal/cliutil"
	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/lm"
	"github.com/specsim/specsim/sim/source"
)

func init() { register(listCommand) }

// corpusSummaries are the one-line summaries of the n-gram corpora of
// 'simulate generate' (lm.Code, lm.Prose), which 'list sources' prints
// after the registered source kinds (package sim/source, each with its
// own summary and keys).
var corpusSummaries = map[string]string{
	lm.Code:  "n-gram LM pair trained on the Go source tree (generate --corpus code)",
	lm.Prose: "n-gram LM pair trained on /usr/share/common-licenses (generate --corpus prose)",
}

func listCommand() *cli.Command {
	return &cli.Command{
		Name:      "list",
		Usage:     "list the acceptance rules (default), the experiments or the sources, each with a one-line summary",
		ArgsUsage: "[rules|experiments|sources]",
		Description: `simulate list (or list rules) prints every rule and mutant with its
parameters, strict points and whether it has an exact law; list experiments
prints the named experiments of 'simulate run' and 'report reproduce --only'
(* marks the main job's); list sources prints the --source kinds, each
with its keys, their defaults and what they set, then the corpora of
'simulate generate'.`,
		Flags: []cli.Flag{jsonFlag(),
			&cli.BoolFlag{Name: "markdown", Usage: "print the rule table of docs/rules.md (markdown; list rules only)"}},
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
// main) and 'list sources' (JSON: name, summary, keys).
type listItem struct {
	Name    string `json:"name"`
	Summary string `json:"summary"`
	// Main is true for the experiments 'report reproduce' runs (nil for
	// sources, whose JSON has no main).
	Main *bool `json:"main,omitempty"`
	// Keys are a source kind's spec keys (seed last); none for
	// experiments and corpora.
	Keys []source.Key `json:"keys,omitempty"`
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

// listSources prints the registered source kinds with their keys, then
// the corpora.
func listSources(w io.Writer, asJSON bool) error {
	var items []listItem
	for _, k := range source.All() {
		items = append(items, listItem{Name: k.Name, Summary: k.Summary, Keys: append(slices.Clone(k.Keys), source.SeedKey)})
	}
	for _, n := range []string{lm.Code, lm.Prose} {
		items = append(items, listItem{Name: n, Summary: corpusSummaries[n]})
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
		for _, k := range it.Keys {
			key := k.Name
			if k.Default != "" {
				key += "=" + k.Default
			}
			fmt.Fprintf(tw, "    %s\t%s\n", key, k.Doc)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, foot)
	return err
}
