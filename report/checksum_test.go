package report

import (
	"bytes"
	"crypto/sha256"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/specsim/specsim/data/results"
	"github.com/specsim/specsim/experiments"
)

var updateChecksums = flag.Bool("update-checksums", false, "rewrite testdata/reproduce-seed1.sha256 from this run")

// checksumFile holds sha256 of 'report export --format csv' of every merged
// table the main job writes at scale 0.01 and seed 1, of its formatted
// tables and of numbers.tex. A refactor must not change a byte; a change
// of numbers on purpose regenerates it in a commit of its own that says
// why (last: the round loop's one naming of stream roles).
const checksumFile = "testdata/reproduce-seed1.sha256"

// The main job's merged tables are byte-identical to the stored checksums,
// but for the timed experiments' (experiments.Experiment.Timed: timings
// of the machine), whose rows, tables and numbers differ from run to run.
func TestReproduceChecksums(t *testing.T) {
	dir := tiny(t)
	var got strings.Builder
	timed, timedTables := map[string]bool{}, map[string]bool{}
	for _, e := range experiments.MainJob() {
		if e.Timed {
			timed[e.Name] = true
			for _, tab := range e.Tables {
				timedTables[tab.Name] = true
			}
		}
	}
	for _, name := range MainExperiments {
		if timed[name] {
			continue
		}
		tab, err := results.ReadFile(filepath.Join(dir, "runs", name, "merged.parquet"))
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := Export(&b, tab, "csv"); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&got, "%x  %s\n", sha256.Sum256(b.Bytes()), name)
	}
	// the formatted tables and the paper's numbers, built from the same run
	b, err := LoadBundle(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tab := range Tables(b) {
		if !timedTables[tab.Name] {
			fmt.Fprintf(&got, "%x  tables/%s.csv\n", sha256.Sum256([]byte(tab.CSV())), tab.Name)
		}
	}
	var ns []Number
	for _, n := range Numbers(b) {
		if !n.Timed {
			ns = append(ns, n)
		}
	}
	fmt.Fprintf(&got, "%x  numbers.tex\n", sha256.Sum256([]byte(NumbersTeX(ns))))
	if *updateChecksums {
		if err := os.WriteFile(checksumFile, []byte(got.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(checksumFile)
	if err != nil {
		t.Fatalf("%v (run go test -run TestReproduceChecksums -update-checksums once to create it)", err)
	}
	// one line per file; their order follows the experiments' order, which
	// is not what is checked
	if g, w := sortedLines(got.String()), sortedLines(string(want)); g != w {
		t.Errorf("merged tables changed:\n got:\n%s\nwant:\n%s", g, w)
	}
}

// sortedLines is text with its lines sorted.
func sortedLines(text string) string {
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	slices.Sort(lines)
	return strings.Join(lines, "\n") + "\n"
}
