package cli

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/specsim/specsim/internal/cliutil"
	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/internal/job"

	"github.com/urfave/cli/v2"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/internal/escape"
	"github.com/specsim/specsim/sim"
)

func jsonFlag() cli.Flag {
	return &cli.BoolFlag{Name: "json", Usage: "print results as JSON with stable field names"}
}

// printResult writes v as JSON with --json, else its text form, and
// returns the JSON writer's error (the caller gives it its kind). The
// text form is escaped for a terminal (it quotes names and messages from
// input: an external implementation's, a log's); JSON escapes its own.
func printResult(c *cli.Context, v any, text func(w io.Writer)) error {
	if c.Bool("json") {
		return cliutil.WriteJSON(c.App.Writer, v)
	}
	text(escape.TerminalWriter(c.App.Writer))
	return nil
}

// DefaultSeed is the master seed of every command when --seed is not
// given, so a command's output is the same everywhere at a commit;
// --seed 0 draws one from the clock. The seed used is always printed.
const DefaultSeed = 1

// DefaultGamma is the draft length γ of every command that takes --gamma
// (exact, check, bench, generate, log-synthetic; the audit's statistical
// checks use the same).
const DefaultGamma = 4

func seedFlag() cli.Flag {
	// no Value: masterSeed tells "not given" (DefaultSeed) from an explicit
	// 0 (the clock); DefaultText states the default once (the help wrote
	// "(default 1) ... (default: 0)")
	return &cli.Uint64Flag{Name: "seed", Usage: "master seed; 0 draws one from the clock; the seed used is printed", DefaultText: fmt.Sprint(DefaultSeed)}
}

// runSeedFlag is 'run's --seed: unset, the seed is the spec's, else the
// stored run's, else DefaultSeed.
func runSeedFlag() cli.Flag {
	return &cli.Uint64Flag{Name: "seed", Usage: "master seed; 0 draws one from the clock; the seed used is printed",
		DefaultText: fmt.Sprintf("the spec's, else the stored run's, else %d", DefaultSeed)}
}

func gammaFlag(usage string) cli.Flag {
	return &cli.IntFlag{Name: "gamma", Value: DefaultGamma, Usage: usage}
}

func algoFlag(def string) cli.Flag {
	return &cli.StringFlag{Name: "algo", Value: def, Usage: "acceptance rule (see 'simulate list')"}
}

func paramFlag() cli.Flag {
	return &cli.StringSliceFlag{Name: "param", Usage: "rule parameter key=value (repeatable)"}
}

func workersFlag(def int) cli.Flag {
	return &cli.IntFlag{Name: "workers", Value: def, Usage: "worker goroutines (0: all cores)"}
}

// masterSeed returns --seed, DefaultSeed when it is not given, or a
// clock seed when it is 0; the caller prints and stores it.
func masterSeed(c *cli.Context) uint64 {
	if !c.IsSet("seed") {
		return DefaultSeed
	}
	if s := c.Uint64("seed"); s != 0 {
		return s
	}
	return uint64(time.Now().UnixNano())
}

// parseDist parses "1/3,2/3" or "0.25,0.75" into probabilities, checks it
// with sim.Validate and renormalises it exactly in float64 (a sum within
// the tolerance but not exactly 1 is reported on stderr).
func parseDist(flag, s string, warn io.Writer) ([]float64, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("%s is empty; give comma-separated probabilities such as 1/3,2/3", flag)
	}
	parts := strings.Split(s, ",")
	p := make([]float64, len(parts))
	for i, part := range parts {
		v, err := sim.ParseNumber(strings.TrimSpace(part))
		if err != nil {
			return nil, fmt.Errorf("%s entry %d (%q): %v; write a decimal (0.25) or a fraction (1/4)", flag, i, part, err)
		}
		p[i] = v
	}
	if err := sim.Validate(flag, p); err != nil {
		return nil, err
	}
	// Fractions such as 1/3 sum to 1 only within rounding; renormalise
	// always, and say so when the sum was off by more than that.
	if s := sim.Normalize(p); math.Abs(s-1) > 1e-12 && warn != nil {
		diag.Warnings{fmt.Errorf("%s summed to %.17g; renormalised", flag, s)}.Print(warn, "simulate")
	}
	return p, nil
}

// pqFlags parses --p and --q with parseDist; errors are usage errors.
func pqFlags(c *cli.Context) (p, q []float64, err error) {
	if p, err = parseDist("--p", c.String("p"), c.App.ErrWriter); err != nil {
		return nil, nil, diag.Usage(err)
	}
	if q, err = parseDist("--q", c.String("q"), c.App.ErrWriter); err != nil {
		return nil, nil, diag.Usage(err)
	}
	return p, q, nil
}

// parseParams parses repeated --param key=value flags (algos.ParseParams).
func parseParams(kvs []string) (algos.Params, error) {
	ps, err := algos.ParseParams(kvs)
	if err != nil {
		return nil, fmt.Errorf("--param %w", err)
	}
	return ps, nil
}

// buildAlgo builds --algo with its --param values and returns every
// parameter of the rule (defaults filled in); errors are usage errors.
func buildAlgo(c *cli.Context) (algos.Entry, sim.Algorithm, algos.Params, error) {
	e, err := algos.Lookup(c.String("algo"))
	if err != nil {
		return e, nil, nil, diag.Usage(err)
	}
	a, full, err := buildRule(c, e)
	return e, a, full, err
}

// buildRule builds rule e (chain or tree) with its --param values and
// returns every parameter of the rule (defaults filled in); errors are
// usage errors.
func buildRule[A any](c *cli.Context, e algos.Rule[A]) (A, algos.Params, error) {
	var zero A
	ps, err := parseParams(c.StringSlice("param"))
	if err != nil {
		return zero, nil, diag.Usage(err)
	}
	full, err := e.Resolve(ps)
	if err != nil {
		return zero, nil, diag.Usage(err)
	}
	a, err := e.New(full)
	if err != nil {
		return zero, nil, diag.Usage(err)
	}
	return a, full, nil
}

// signalContext is job.SignalContext (kept as a name for the commands
// of this package).
var signalContext = job.SignalContext

// isTerminal is job.IsTerminal.
var isTerminal = job.IsTerminal

// fileArg is the input file of a command that takes one: its positional
// argument FILE (every such command accepts it) or the older flag --name
// (kept as an alias). Giving neither, both, or more than one positional
// argument is a usage error; flags go before FILE.
func fileArg(c *cli.Context, name string) (string, error) {
	flag := c.String(name)
	switch {
	case c.NArg() > 1:
		return "", diag.Usage(fmt.Errorf("%s takes one FILE argument, got %d (%s); put flags before FILE", c.Command.Name, c.NArg(), strings.Join(c.Args().Slice(), " ")))
	case c.NArg() == 1 && flag != "" && flag != c.Args().First():
		return "", diag.Usage(fmt.Errorf("%s: FILE %s and --%s %s differ; give one", c.Command.Name, c.Args().First(), name, flag))
	case c.NArg() == 1:
		return c.Args().First(), nil
	case flag != "":
		return flag, nil
	}
	return "", diag.Usage(fmt.Errorf("%s needs a FILE argument (or --%s FILE)", c.Command.Name, name))
}

// refuseFlags is the usage error of the first of flags that is set on c
// (none of which applies to the command as configured: why says to what
// they apply), or nil: a flag that does not apply is refused with the
// reason, never ignored.
func refuseFlags(c *cli.Context, why string, flags ...string) error {
	for _, f := range flags {
		if c.IsSet(f) {
			return diag.Usage(fmt.Errorf("--%s does not apply here: %s; drop it", f, why))
		}
	}
	return nil
}

// flagNames lists the names of flags (their first names).
func flagNames(flags []cli.Flag) []string {
	var names []string
	for _, f := range flags {
		names = append(names, f.Names()[0])
	}
	return names
}
