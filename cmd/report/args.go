package main

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// interspersed wraps a command action so that flags may follow the
// positional argument (simulate run SPEC --out DIR): urfave/cli v2 stops
// parsing flags at the first positional argument, so when flags remain
// among the arguments the command is parsed again with the flags first.
func interspersed(action cli.ActionFunc) cli.ActionFunc {
	return func(c *cli.Context) error {
		rest := c.Args().Slice()
		if len(rest) < 2 || !anyFlag(rest[1:]) {
			return action(c)
		}
		bools := map[string]bool{}
		for _, f := range c.Command.Flags {
			if _, ok := f.(*cli.BoolFlag); ok {
				for _, n := range f.Names() {
					bools[n] = true
				}
			}
		}
		var flags, pos []string
		for i := 0; i < len(rest); i++ {
			a := rest[i]
			if a == "--" {
				pos = append(pos, rest[i+1:]...)
				break
			}
			if !strings.HasPrefix(a, "-") || a == "-" {
				pos = append(pos, a)
				continue
			}
			flags = append(flags, a)
			name := strings.TrimLeft(a, "-")
			if strings.Contains(name, "=") || bools[name] {
				continue
			}
			if i+1 < len(rest) {
				flags = append(flags, rest[i+1])
				i++
			}
		}
		// Keep the flags parsed before the positional argument too.
		var before []string
		for _, n := range c.FlagNames() {
			if !c.IsSet(n) {
				continue
			}
			if bools[n] {
				before = append(before, "--"+n+"="+c.String(n))
				continue
			}
			switch v := c.Value(n).(type) {
			case cli.StringSlice:
				for _, s := range v.Value() {
					before = append(before, "--"+n, s)
				}
			default:
				before = append(before, "--"+n, c.String(n))
			}
		}
		args := append([]string{c.Command.Name}, before...)
		args = append(args, flags...)
		args = append(args, "--")
		args = append(args, pos...)
		cmd := *c.Command
		cmd.Action = action
		return cmd.Run(cli.NewContext(c.App, nil, c.Lineage()[1]), args...)
	}
}

func anyFlag(args []string) bool {
	for _, a := range args {
		if strings.HasPrefix(a, "-") && a != "-" {
			return true
		}
	}
	return false
}
