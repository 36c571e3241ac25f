package check_test

import (
	"encoding/csv"
	"flag"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/specsim/specsim/internal/longtest"
	"github.com/specsim/specsim/sim/check"
	"github.com/specsim/specsim/sim/stattest"
)

var calibrationOut = flag.String("calibration", "", "with -prob or SPECSIM_LONG=1: write TestCalibration's counts to this CSV (the main job's calibration experiment reads experiments/calibration.csv)")

// CalibrationCommand is the command that writes experiments/calibration.csv.
const calibrationCommand = "SPECSIM_LONG=1 go test ./sim/check -run 'TestCalibration$' -count=1 -timeout 60m -calibration ../../experiments/calibration.csv"

// calibrationFamily is one test family of the calibration: the test's
// name in the results, the planted family it is measured on, and the
// trials and batch of each check.
type calibrationFamily struct {
	family, test, source string
	trials, batch        int64
	// run checks the family's sampler deviating by TV tv in the test's
	// quantity (0: the target's law) under a seed.
	run func(tv float64, seed uint64) check.Result
}

// calibrationFamilies are the families of TestCalibration: the
// per-position test (position 1), the PIT pair test and the cross-row
// tests at every position and at the first tokens.
func calibrationFamilies(t *testing.T, trials int64) []calibrationFamily {
	grid := func(name string, poolSeed int, plant func(eps float64) check.Stepper, cfg check.Config) func(float64, uint64) check.Result {
		run := gridRun(t, name, poolSeed, plant, cfg)
		return func(tv float64, seed uint64) check.Result { return run(2*tv, seed) } // checkerboard: TV = eps/2
	}
	const pairName, crossAll, crossFirst = "positions 1 and 2 jointly", "rows of a batch (independence, every position)", "rows of a batch (independence, first tokens)"
	return []calibrationFamily{
		{"per-position χ²", "position 1 given its state", "uniform V = 8, γ = 1", trials, 1, positionOne(t, trials)},
		{"PIT pair", pairName, "uniform pool V = 32, γ = 1, 16×16 grid", trials, 1,
			grid(pairName, 1, func(eps float64) check.Stepper { return pairPlant{b: 16, m: 2, eps: eps} }, check.Config{Trials: trials})},
		{"cross-row, every position", crossAll, "uniform pool V = 32, batch 64, 16×16 grid", trials, 64,
			grid(crossAll, 2, func(eps float64) check.Stepper { return crossPlant{b: 16, m: 2, eps: eps} }, check.Config{Trials: trials, Batch: 64, CrossRow: true})},
		{"cross-row, first tokens", crossFirst, "uniform pool V = 32, batch 64, 16×16 grid", trials, 64,
			grid(crossFirst, 2, func(eps float64) check.Stepper { return crossPlant{b: 16, m: 2, eps: eps, first: true} }, check.Config{Trials: trials, Batch: 64, CrossRow: true})},
	}
}

// calibrationCounts runs n checks of the undisturbed sampler (seeds
// 1e6+1..1e6+n) and n of the sampler deviating by exactly the test's
// stated minimum detectable TV (seeds 1..n, the TV read from a check of
// the undisturbed sampler) and returns the stated TV, the false alarms
// (verdict violated without a deviation) and the detections (verdict
// violated with it).
func calibrationCounts(t *testing.T, f calibrationFamily, n int) (tv float64, alarms, hits int) {
	tv = findTest(t, f.run(0, 0), f.test).MinDetTV
	for s := 1; s <= n; s++ {
		if f.run(0, uint64(1_000_000+s)).Verdict == check.Violated {
			alarms++
		}
		if f.run(tv, uint64(s)).Verdict == check.Violated {
			hits++
		}
	}
	return tv, alarms, hits
}

// TestCalibration (opt-in, -prob or SPECSIM_LONG=1) measures the false
// alarms and the power of each test family: 300 checks of the undisturbed
// sampler must give no more verdicts violated than Binomial(300, 0.01)
// (the check's family-wise level) allows with probability 1-1e-3, and 300
// checks at the stated minimum detectable TV no fewer than Binomial(300,
// 0.9) allows. With -calibration FILE it writes the counts, the command
// and the date to FILE, which the main job's calibration experiment
// reports.
func TestCalibration(t *testing.T) {
	if !*prob && !longtest.Enabled() {
		t.Skip("opt-in: " + calibrationCommand)
	}
	const n, trials = 300, 20000
	rows := [][]string{{"family", "test", "source", "trials", "batch", "runs", "level", "stated_tv", "false_alarms", "detections", "command", "date"}}
	_, alarmsHi := stattest.BinomialAcceptance(n, check.DefaultLevel, 1e-3)
	hitsLo, _ := stattest.BinomialAcceptance(n, check.DefaultPower, 1e-3)
	for _, f := range calibrationFamilies(t, trials) {
		tv, alarms, hits := calibrationCounts(t, f, n)
		t.Logf("%s (%s): %d false alarms and %d detections at the stated TV %.4g in %d checks each", f.family, f.test, alarms, hits, tv, n)
		if alarms > alarmsHi || hits < hitsLo {
			t.Errorf("%s: %d false alarms (at most %d allowed) and %d detections (at least %d) in %d checks", f.family, alarms, alarmsHi, hits, hitsLo, n)
		}
		rows = append(rows, []string{f.family, f.test, f.source, fmt.Sprint(f.trials), fmt.Sprint(f.batch), fmt.Sprint(n), fmt.Sprint(check.DefaultLevel),
			strconv.FormatFloat(tv, 'g', 6, 64), fmt.Sprint(alarms), fmt.Sprint(hits), calibrationCommand, time.Now().UTC().Format("2006-01-02")})
	}
	if *calibrationOut == "" {
		return
	}
	fh, err := os.Create(*calibrationOut)
	if err != nil {
		t.Fatal(err)
	}
	w := csv.NewWriter(fh)
	if err := w.WriteAll(rows); err != nil {
		t.Fatal(err)
	}
	if err := fh.Close(); err != nil {
		t.Fatal(err)
	}
}
