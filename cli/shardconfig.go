package cli

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/internal/statefile"
)

// notConfig are the flags of 'simulate check' that change neither a
// check's trials nor its tests, and so are not part of a shard's
// configuration: how it runs (workers, timeout, the external command
// what it prints or writes, the sharding itself, and the seed (recorded
// on its own). An external check's command is part of it (the merge
// rebuilds the check from it, without starting it), and its
// implementation's name and protocol are recorded beside it.
var notConfig = []string{"workers", "json", "report", "seconds", "timeout", "shard", "state-out", "merge", "seed", "help"}

// flagValues renders flag name's value in c as the words a command line
// gives it (one per value of a repeatable flag).
func flagValues(c *cli.Context, name string) []string {
	switch v := c.Value(name).(type) {
	case bool:
		return []string{strconv.FormatBool(v)}
	case cli.StringSlice:
		return append([]string{}, v.Value()...)
	case *cli.StringSlice:
		return append([]string{}, v.Value()...)
	default:
		return []string{fmt.Sprint(v)}
	}
}

// shardConfig is a check's configuration as its state files record it:
// every flag of fs that changes its trials or tests, with its value as c
// resolved it (defaults included), and the names of those c was given.
func shardConfig(c *cli.Context, fs []cli.Flag) (config map[string][]string, given []string) {
	config = map[string][]string{}
	for _, f := range fs {
		name := f.Names()[0]
		if slices.Contains(notConfig, name) {
			continue
		}
		config[name] = flagValues(c, name)
		if c.IsSet(name) {
			given = append(given, name)
		}
	}
	slices.Sort(given)
	return config, given
}

// mergedContext is the context of the check that state header h
// describes, as if its flags had been given to cmd: the flags h records as
// given, with h's seed, under c's parent (the global flags, such as
// --mem-budget). Flags given to the merge itself that contradict h are
// refused, as is a header whose flags this simulate resolves differently
// (another version's defaults).
func mergedContext(c *cli.Context, cmd *cli.Command, h statefile.Header) (*cli.Context, error) {
	args := []string{"--seed=" + strconv.FormatUint(h.Seed, 10)}
	for _, name := range h.Given {
		for _, v := range h.Config[name] {
			args = append(args, "--"+name+"="+v)
		}
	}
	nc, err := commandContext(c, cmd, args)
	if err != nil {
		return nil, diag.Usage(fmt.Errorf("--merge: the state files' configuration does not parse here (%v); merge with the simulate that ran the shards", err))
	}
	config, _ := shardConfig(nc, cmd.Flags)
	if name := statefile.ConfigDiff(config, h.Config); name != "" {
		return nil, diag.Usage(fmt.Errorf("--merge: this simulate resolves --%s to %q where the shards had %q; merge with the simulate that ran the shards", name, strings.Join(config[name], ","), strings.Join(h.Config[name], ",")))
	}
	mine, _ := shardConfig(c, cmd.Flags)
	for _, f := range cmd.Flags {
		name := f.Names()[0]
		if c.IsSet(name) && !slices.Contains(notConfig, name) && !slices.Equal(mine[name], h.Config[name]) {
			return nil, diag.Usage(fmt.Errorf("--merge: --%s %s contradicts the shards' --%s %s; leave it out (the configuration comes from the state files)", name, strings.Join(mine[name], ","), name, strings.Join(h.Config[name], ",")))
		}
	}
	if c.IsSet("seed") && c.Uint64("seed") != h.Seed {
		return nil, diag.Usage(fmt.Errorf("--merge: --seed %d contradicts the shards' seed %d; leave it out", c.Uint64("seed"), h.Seed))
	}
	return nc, nil
}

// commandContext is the context cmd would run in, given args (its flags
// only), under c's parent (the global flags, such as --mem-budget).
func commandContext(c *cli.Context, cmd *cli.Command, args []string) (*cli.Context, error) {
	set := flag.NewFlagSet(cmd.Name, flag.ContinueOnError)
	set.SetOutput(io.Discard)
	for _, f := range cmd.Flags {
		if err := f.Apply(set); err != nil {
			return nil, err
		}
	}
	if err := set.Parse(args); err != nil {
		return nil, err
	}
	if set.NArg() > 0 {
		return nil, fmt.Errorf("%q is not a flag of %s", set.Arg(0), cmd.Name)
	}
	var parent *cli.Context
	if p := c.Lineage(); len(p) > 1 {
		parent = p[1]
	}
	nc := cli.NewContext(c.App, set, parent)
	nc.Command = cmd
	return nc, nil
}

// parseShard reads --shard I/N: shard I (0-based) of N.
func parseShard(s string) (int, int, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return 0, 0, diag.Usage(fmt.Errorf("--shard %q; give I/N with 0 <= I < N, e.g. --shard 0/4 for the first of four shards", s))
	}
	return i, n, nil
}
