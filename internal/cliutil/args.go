package cliutil

import (
	"fmt"
	"strings"

	"github.com/specsim/specsim/internal/diag"
	"github.com/urfave/cli/v2"
)

// Interspersed moves a subcommand's positional arguments after its flags,
// so that 'simulate run NAME --json' works like 'simulate run --json NAME'
// (urfave/cli v2 stops reading flags at the first positional argument).
// Flags that take a value consume the next word unless written as
// --flag=value; everything after "--" is left alone.
func Interspersed(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	var cmd *cli.Command
	for _, c := range app.Commands {
		if c.Name == args[1] {
			cmd = c
		}
	}
	if cmd == nil || len(cmd.Subcommands) > 0 {
		return args
	}
	boolean := map[string]bool{"help": true, "h": true}
	for _, f := range cmd.Flags {
		if _, ok := f.(*cli.BoolFlag); ok {
			for _, n := range f.Names() {
				boolean[n] = true
			}
		}
	}
	flags := []string{}
	var pos []string
	rest := args[2:]
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if a == "--" {
			pos = append(pos, rest[i:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			pos = append(pos, a)
			continue
		}
		flags = append(flags, a)
		name := strings.TrimLeft(a, "-")
		if strings.Contains(name, "=") || boolean[name] {
			continue
		}
		if i+1 < len(rest) {
			flags = append(flags, rest[i+1])
			i++
		}
	}
	out := append([]string{args[0], args[1]}, flags...)
	return append(out, pos...)
}

// OneArg returns the one positional argument of the running command, or
// the usage error "<command> needs one <what>" when there is none or more
// than one.
func OneArg(c *cli.Context, what string) (string, error) {
	if c.NArg() != 1 {
		return "", diag.Usage(fmt.Errorf("%s needs one %s", c.Command.Name, what))
	}
	return c.Args().First(), nil
}
