package cliutil

import (
	"fmt"
	"slices"
	"strings"

	"github.com/specsim/specsim/internal/diag"
	"github.com/urfave/cli/v2"
)

// Interspersed moves a subcommand's positional arguments after its flags,
// so that 'simulate run NAME --json' works like 'simulate run --json NAME'
// (urfave/cli v2 stops reading flags at the first positional argument).
// Global flags may come before the command ('simulate --mem-budget 1
// replay LOG --algo block'): they are kept in place and the command is
// found after them. Flags that take a value consume the next word unless
// written as --flag=value; everything after "--" is left alone.
func Interspersed(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	// the global flags before the command, and where the command is
	at := 1
	globalBool := boolFlags(app.Flags)
	for at < len(args) && strings.HasPrefix(args[at], "-") && args[at] != "-" && args[at] != "--" {
		name := strings.TrimLeft(args[at], "-")
		at++
		if !strings.Contains(name, "=") && !globalBool[name] && at < len(args) {
			at++ // its value
		}
	}
	if at >= len(args) {
		return args
	}
	var cmd *cli.Command
	for _, c := range app.Commands {
		if c.Name == args[at] || slices.Contains(c.Aliases, args[at]) {
			cmd = c
		}
	}
	if cmd == nil || len(cmd.Subcommands) > 0 {
		return args
	}
	boolean := boolFlags(cmd.Flags)
	flags := []string{}
	var pos []string
	rest := args[at+1:]
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
	out := append(slices.Clone(args[:at+1]), flags...)
	return append(out, pos...)
}

// boolFlags are the names of fs's boolean flags (which take no value),
// with help.
func boolFlags(fs []cli.Flag) map[string]bool {
	boolean := map[string]bool{"help": true, "h": true, "version": true, "v": true}
	for _, f := range fs {
		if _, ok := f.(*cli.BoolFlag); ok {
			for _, n := range f.Names() {
				boolean[n] = true
			}
		}
	}
	return boolean
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
