package cli

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/specsim/specsim/internal/cliutil"

	"github.com/urfave/cli/v2"

	"github.com/specsim/specsim/algos"
)

func init() { register(listCommand) }

// listParam and listEntry are the JSON form of 'simulate list'.
type listParam struct {
	Name    string  `json:"name"`
	Default float64 `json:"default"`
	Range   string  `json:"range"`
	Doc     string  `json:"doc"`
}

type listEntry struct {
	Name    string      `json:"name"`
	Kind    string      `json:"kind"`
	HasLaw  bool        `json:"has_law"`
	Lossy   bool        `json:"lossy"`
	Greedy  bool        `json:"greedy"`
	Summary string      `json:"summary"`
	Paper   string      `json:"paper"`
	Params  []listParam `json:"params"`
}

func listCommand() *cli.Command {
	return &cli.Command{
		Name:  "list",
		Usage: "list the acceptance rules and mutants, their parameters, and whether each has a law",
		Flags: []cli.Flag{jsonFlag()},
		Action: func(c *cli.Context) error {
			var out []listEntry
			for _, e := range algos.All() {
				a, err := e.Build(nil)
				if err != nil {
					return err
				}
				out = append(out, newListEntry(e.Info, algos.HasLaw(a), ""))
			}
			for _, e := range algos.AllTree() {
				a, err := e.Build(nil)
				if err != nil {
					return err
				}
				out = append(out, newListEntry(e.Info, algos.HasTreeLaw(a), "tree-"))
			}
			if c.Bool("json") {
				return cliutil.WriteJSON(c.App.Writer, out)
			}
			tw := tabwriter.NewWriter(c.App.Writer, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tKIND\tLAW\tPARAMS\tSUMMARY")
			for _, e := range out {
				var ps []string
				for _, p := range e.Params {
					ps = append(ps, fmt.Sprintf("%s=%g %s", p.Name, p.Default, p.Range))
				}
				law := "no"
				if e.HasLaw {
					law = "yes"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", e.Name, e.Kind, law, strings.Join(ps, "; "), e.Summary)
			}
			return tw.Flush()
		},
	}
}

// newListEntry describes one rule; prefix marks tree rules ("tree-").
func newListEntry(in algos.Info, hasLaw bool, prefix string) listEntry {
	le := listEntry{Name: in.Name, Kind: prefix + "rule", HasLaw: hasLaw, Lossy: in.Lossy, Greedy: in.Greedy,
		Summary: in.Summary, Paper: in.Paper, Params: []listParam{}}
	if in.Mutant {
		le.Kind = prefix + "mutant"
	}
	for _, p := range in.Params {
		le.Params = append(le.Params, listParam{p.Name, p.Default, p.Range(), p.Doc})
	}
	return le
}
