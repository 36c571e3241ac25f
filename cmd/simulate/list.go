package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

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
				le := listEntry{Name: e.Name, Kind: "rule", HasLaw: algos.HasLaw(a), Lossy: e.Lossy, Greedy: e.Greedy,
					Summary: e.Summary, Paper: e.Paper, Params: []listParam{}}
				if e.Mutant {
					le.Kind = "mutant"
				}
				for _, p := range e.Params {
					le.Params = append(le.Params, listParam{p.Name, p.Default, p.Range(), p.Doc})
				}
				out = append(out, le)
			}
			for _, e := range algos.AllTree() {
				a, err := e.Build(nil)
				if err != nil {
					return err
				}
				le := listEntry{Name: e.Name, Kind: "tree-rule", HasLaw: algos.HasTreeLaw(a), Lossy: e.Lossy, Greedy: e.Greedy,
					Summary: e.Summary, Paper: e.Paper, Params: []listParam{}}
				if e.Mutant {
					le.Kind = "tree-mutant"
				}
				for _, p := range e.Params {
					le.Params = append(le.Params, listParam{p.Name, p.Default, p.Range(), p.Doc})
				}
				out = append(out, le)
			}
			if c.Bool("json") {
				return writeJSON(c.App.Writer, out)
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
