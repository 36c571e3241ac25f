package experiments

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/csv"
	"fmt"
	"strconv"

	"github.com/specsim/specsim/sim/stattest"
	"github.com/specsim/specsim/table"
)

// calibrationCSV is the long tests' measurement of the check's false
// alarms and power per test family (sim/check's TestCalibration, whose
// command and date each row carries): 300 checks of an undisturbed
// sampler and 300 of one deviating by exactly the test's stated minimum
// detectable TV, 20,000 trials each. 11 s of CPU (a sixth of the main
// job); the main job reads
// the committed counts and does not rerun them.
//
//go:embed calibration.csv
var calibrationCSV []byte

// calibrationConfidence is the confidence of the Wilson intervals of the
// calibration's rates.
const calibrationConfidence = 0.95

func init() {
	Register(Experiment{
		Name:    "calibration",
		Main:    79,
		Section: "Calibration and power of the check",
		Summary: "false alarms at the level and detections at the stated minimum detectable TV of each test family, from the long tests' committed counts (sim/check TestCalibration)",
		Whole:   func(context.Context, Config) ([]Row, error) { return calibrationRows(calibrationCSV) },
		Tables:  []Table{{Name: "calibration", Make: calibrationTable}},
		Numbers: []table.Number{
			{Macro: "CalRuns", Col: "runs", Doc: "checks per family and condition"},
			{Macro: "CalTrials", Col: "trials", Doc: "trials per check"},
			{Macro: "CalFamilies", Agg: table.Count, Doc: "test families calibrated"},
			{Macro: "CalAlarmsMax", Agg: table.Max, Col: "false_alarms", Doc: "the most false alarms of a family"},
			{Macro: "CalAlarmsHiMax", Agg: table.Max, Col: "false_alarm_hi", Digits: 3, Doc: "the largest upper end of a false-alarm rate's 95% interval"},
			{Macro: "CalDetectMin", Agg: table.Min, Col: "detections", Doc: "the fewest detections of a family at its stated TV"},
			{Macro: "CalDetectMax", Agg: table.Max, Col: "detections", Doc: "the most detections of a family at its stated TV"},
			{Macro: "CalDetectLoMin", Agg: table.Min, Col: "detection_lo", Digits: 3, Doc: "the smallest lower end of a detection rate's 95% interval"},
			{Macro: "CalDate", Agg: table.Str, Col: "date", Doc: "the date the counts were measured"},
		},
	})
}

// calibrationRows parses the calibration CSV into rows with the Wilson
// intervals of the false-alarm and detection rates. A malformed file is
// an error naming the line.
func calibrationRows(b []byte) ([]Row, error) {
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("calibration.csv: %w", err)
	}
	if len(recs) < 2 {
		return nil, fmt.Errorf("calibration.csv: no rows; regenerate it with sim/check's TestCalibration")
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	var rows []Row
	for n, rec := range recs[1:] {
		num := func(k string) (float64, error) {
			i, ok := col[k]
			if !ok {
				return 0, fmt.Errorf("calibration.csv: no column %q", k)
			}
			v, err := strconv.ParseFloat(rec[i], 64)
			if err != nil {
				return 0, fmt.Errorf("calibration.csv line %d: %s = %q is not a number", n+2, k, rec[i])
			}
			return v, nil
		}
		r := Row{{K: "experiment", V: "calibration"}}
		for _, k := range []string{"family", "test", "source"} {
			r = append(r, KV{K: k, V: rec[col[k]]})
		}
		vals := map[string]float64{}
		for _, k := range []string{"trials", "batch", "runs", "level", "stated_tv", "false_alarms", "detections"} {
			if vals[k], err = num(k); err != nil {
				return nil, err
			}
		}
		runs, fa, det := int64(vals["runs"]), int64(vals["false_alarms"]), int64(vals["detections"])
		if runs < 1 || fa < 0 || fa > runs || det < 0 || det > runs {
			return nil, fmt.Errorf("calibration.csv line %d: %d false alarms and %d detections in %d runs", n+2, fa, det, runs)
		}
		faLo, faHi := stattest.Wilson(fa, runs, calibrationConfidence)
		detLo, detHi := stattest.Wilson(det, runs, calibrationConfidence)
		r = append(r, KV{K: "trials", V: int64(vals["trials"])}, KV{K: "batch", V: int64(vals["batch"])}, KV{K: "runs", V: runs},
			KV{K: "level", V: vals["level"]}, KV{K: "stated_tv", V: vals["stated_tv"]},
			KV{K: "false_alarms", V: fa}, KV{K: "false_alarm_lo", V: faLo}, KV{K: "false_alarm_hi", V: faHi},
			KV{K: "detections", V: det}, KV{K: "detection_lo", V: detLo}, KV{K: "detection_hi", V: detHi},
			KV{K: "command", V: rec[col["command"]]}, KV{K: "date", V: rec[col["date"]]})
		rows = append(rows, r)
	}
	return rows, nil
}

// calibrationTable is the calibration's table: per family, the test, its
// stated minimum detectable TV, and the false alarms and detections with
// their Wilson 95% intervals.
func calibrationTable(rows []Row) table.Text {
	t := table.Text{Caption: "Calibration and power of the check per test family (sim/check TestCalibration, " + calibrationWhen(rows) + "): " +
		"verdicts violated in checks of an undisturbed sampler (false alarms, column alarms; family-wise level 0.01) and of one deviating by exactly the test's stated minimum detectable TV (detections; power 0.9 stated), " +
		"each count with its Wilson 95% interval; " + calibrationSize(rows) + ".",
		Header: []string{"family", "setting", "stated TV", "alarms", "95% CI", "detections", "95% CI"},
		Right:  table.RightCols(7, 2, 3, 5)}
	for _, r := range rows {
		t.Rows = append(t.Rows, []string{r.String("family"), r.String("source"), dec(r, "stated_tv", 4),
			dec(r, "false_alarms", 0) + " / " + dec(r, "runs", 0), bracket(r, "false_alarm_lo", "false_alarm_hi", 3),
			dec(r, "detections", 0) + " / " + dec(r, "runs", 0), bracket(r, "detection_lo", "detection_hi", 3)})
	}
	return t
}

// calibrationSize is the checks and trials of the rows' measurement.
func calibrationSize(rows []Row) string {
	if len(rows) == 0 {
		return NA
	}
	return dec(rows[0], "runs", 0) + " checks each way of " + dec(rows[0], "trials", 0) + " trials"
}

// calibrationWhen is the command and date of the rows' measurement.
func calibrationWhen(rows []Row) string {
	if len(rows) == 0 {
		return NA
	}
	return "measured " + rows[0].String("date") + " by " + rows[0].String("command")
}
