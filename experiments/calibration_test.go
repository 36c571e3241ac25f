package experiments

import (
	"strings"
	"testing"

	"github.com/specsim/specsim/sim/check"
	"github.com/specsim/specsim/sim/stattest"
	"github.com/specsim/specsim/table"
)

// The committed calibration counts parse, name their command and date,
// cover the four test families, and pass the acceptance TestCalibration
// applies: false alarms within Binomial(runs, 0.01)'s 1-1e-3 range, and
// detections at the stated TV within Binomial(runs, 0.9)'s; each Wilson
// interval holds its rate.
func TestCalibrationCommitted(t *testing.T) {
	rows, err := calibrationRows(calibrationCSV)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 {
		t.Fatalf("%d families, want 4 (per-position, PIT pair, two cross-row)", len(rows))
	}
	for _, r := range rows {
		runs := int(table.Num(r, "runs"))
		fa, det := table.Num(r, "false_alarms"), table.Num(r, "detections")
		_, faHi := stattest.BinomialAcceptance(runs, check.DefaultLevel, 1e-3)
		detLo, _ := stattest.BinomialAcceptance(runs, check.DefaultPower, 1e-3)
		if fa > float64(faHi) || det < float64(detLo) {
			t.Errorf("%s: %g false alarms (at most %d) and %g detections (at least %d) in %d", r.String("family"), fa, faHi, det, detLo, runs)
		}
		for _, c := range []struct{ k, lo, hi string }{{"false_alarms", "false_alarm_lo", "false_alarm_hi"}, {"detections", "detection_lo", "detection_hi"}} {
			if p := table.Num(r, c.k) / float64(runs); !(table.Num(r, c.lo) <= p && p <= table.Num(r, c.hi)) {
				t.Errorf("%s: rate %g outside its interval [%g, %g]", r.String("family"), p, table.Num(r, c.lo), table.Num(r, c.hi))
			}
		}
		if !strings.Contains(r.String("command"), "TestCalibration") || len(r.String("date")) != len("2006-01-02") {
			t.Errorf("%s: command %q, date %q", r.String("family"), r.String("command"), r.String("date"))
		}
	}
}

// A calibration file with a count that is not a number, more detections
// than runs, or no rows is refused with the line and the field.
func TestCalibrationMalformed(t *testing.T) {
	head := "family,test,source,trials,batch,runs,level,stated_tv,false_alarms,detections,command,date\n"
	for in, want := range map[string]string{
		head + "f,t,s,100,1,10,0.01,0.05,x,9,c,2026-01-01\n":  `line 2: false_alarms = "x"`,
		head + "f,t,s,100,1,10,0.01,0.05,1,11,c,2026-01-01\n": "1 false alarms and 11 detections in 10 runs",
		head: "no rows",
	} {
		if _, err := calibrationRows([]byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want it to say %q", in, err, want)
		}
	}
	rows, err := calibrationRows([]byte(head + "f,t,s,100,1,10,0.01,0.05,1,9,c,2026-01-01\n"))
	if err != nil {
		t.Fatal(err)
	}
	// Wilson 95% of 9 of 10: [0.5958, 0.9821]
	if lo, hi := table.Num(rows[0], "detection_lo"), table.Num(rows[0], "detection_hi"); !(lo > 0.5957 && lo < 0.5959 && hi > 0.9820 && hi < 0.9822) {
		t.Errorf("9 of 10: Wilson interval [%g, %g], want [0.5958, 0.9821]", lo, hi)
	}
}
