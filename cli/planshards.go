package cli

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/resolve"
)

// planJSON is the JSON form of 'simulate plan': the plan in trials and
// seconds, and in shards of a Slurm array.
type planJSON struct {
	resolve.PlanReport
	// Rate is the trials per second one array task runs: --rate, else the
	// rate of the plan's seconds (RateFrom says which: "--rate", "pilot"
	// or "confirming check").
	Rate     float64 `json:"rate"`
	RateFrom string  `json:"rate_from"`
	// TaskSeconds is --task-time, the wall time of one array task; each
	// task is given at most taskFill of it. Shards is the number of tasks
	// the planned trials need, TrialsPerShard the most one runs.
	TaskSeconds    float64 `json:"task_seconds"`
	Shards         int64   `json:"shards"`
	TrialsPerShard int64   `json:"trials_per_shard"`
	// Slurm is the 'simulate slurm --check' line that runs them.
	Slurm string `json:"slurm"`
}

// taskFill is the share of a task's wall time its trials are planned to
// take: the rest is left for building the source, writing the state and
// the --signal warning before the limit.
const taskFill = 0.8

// planFlags are 'simulate plan”s flags for the answer in shards.
func planFlags() []cli.Flag {
	return []cli.Flag{
		&cli.DurationFlag{Name: "task-time", Value: time.Hour, Usage: "wall time of one Slurm array task: the plan says how many shards of the planned trials fit, each using at most 80% of it"},
		&cli.Float64Flag{Name: "rate", Usage: "trials per second one array task runs (default: this machine's, measured by the largest check the plan ran)"},
		&cli.StringFlag{Name: "out", Value: "specsim-check", Usage: "the --out directory written into the printed 'simulate slurm --check' line"},
	}
}

// planShards adds the answer in shards to rep: the tasks of --task-time
// at --rate (else the rate of the plan's seconds) that the planned trials need, and the
// 'simulate slurm --check' line that runs them.
func planShards(c *cli.Context, rep resolve.PlanReport, seed uint64) (planJSON, error) {
	out := planJSON{PlanReport: rep, Rate: c.Float64("rate"), RateFrom: "--rate", TaskSeconds: c.Duration("task-time").Seconds()}
	if c.IsSet("rate") && !(out.Rate > 0 && out.Rate < math.Inf(1)) {
		return out, diag.Usage(fmt.Errorf("--rate = %g; give the trials per second of one task, above 0", out.Rate))
	}
	if out.TaskSeconds < 1 {
		return out, diag.Usage(fmt.Errorf("--task-time = %v; give the wall time of one array task, at least 1s (e.g. 1h)", c.Duration("task-time")))
	}
	if !c.IsSet("rate") {
		out.Rate, out.RateFrom = float64(rep.Trials)/rep.Seconds, rep.SecondsFrom // the plan's seconds' rate
	}
	per := math.Floor(out.Rate * out.TaskSeconds * taskFill)
	if per < 1 {
		return out, diag.Usage(fmt.Errorf("one task of --task-time %v runs %.3g trials at %.3g trials/s; give a longer --task-time", c.Duration("task-time"), per, out.Rate))
	}
	out.Shards = int64(math.Ceil(float64(rep.Trials) / per))
	out.TrialsPerShard = (rep.Trials + out.Shards - 1) / out.Shards
	args := []string{"simulate", "slurm", "--check", "--shards", fmt.Sprint(out.Shards), "--out", quoteArg(c.String("out")),
		"--time", slurmTime(c.Duration("task-time")), "--seed", fmt.Sprint(seed), "--"}
	args = append(args, setFlags(c, checkFlags())...)
	out.Slurm = strings.Join(append(dropFlags(args, notInSlurmCheck), "--trials", fmt.Sprint(rep.Trials)), " ")
	return out, nil
}

// dropFlags removes from args (words "--name value" or "--name=value",
// as setFlags renders them) the flags named in names.
func dropFlags(args, names []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		name, _, hasEq := strings.Cut(strings.TrimPrefix(args[i], "--"), "=")
		if strings.HasPrefix(args[i], "--") && args[i] != "--" && slices.Contains(append(names, "trials"), name) && i > slices.Index(args, "--") {
			if !hasEq {
				i++ // its value
			}
			continue
		}
		out = append(out, args[i])
	}
	return out
}

// slurmTime renders d as Slurm's [D-]HH:MM:SS.
func slurmTime(d time.Duration) string {
	s := int64(math.Ceil(d.Seconds()))
	h, m, sec := s/3600, s/60%60, s%60
	if h >= 24 {
		return fmt.Sprintf("%d-%02d:%02d:%02d", h/24, h%24, m, sec)
	}
	return fmt.Sprintf("%02d:%02d:%02d", h, m, sec)
}

// printPlanShards prints the plan's answer in shards.
func printPlanShards(w io.Writer, o planJSON) {
	fmt.Fprintf(w, "  in shards: %d array tasks of at most %d trials, each about %.0f s of its %.0f s (--task-time) at %.4g trials/s (%s)\n",
		o.Shards, o.TrialsPerShard, float64(o.TrialsPerShard)/o.Rate, o.TaskSeconds, o.Rate, o.RateFrom)
	fmt.Fprintf(w, "  %s\n", o.Slurm)
}
