package clitest

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go/format"

	"github.com/specsim/specsim/data/results"
	"github.com/specsim/specsim/data/results/bombtest"
	"github.com/specsim/specsim/table"
)

// hostile30 is a row of issue 30's high findings: a command, its exit
// code, a text its one stderr line must hold, and a check of what it left
// behind. The run is bounded by 500 MB of peak RSS and 10 s.
type hostile30 struct {
	finding string
	cmd     []string
	code    int
	says    string
	after   func() string
}

// unchanged reports a file under dir whose content differs from before.
func unchanged(t *testing.T, dir string) func() string {
	before := hashFiles(t, []string{dir})
	return func() string {
		if !mapsEqual(before, hashFiles(t, []string{dir})) {
			return "a file outside the output directory changed: " + dir
		}
		return ""
	}
}

// plantBomb writes at out the parquet file in, with the first column
// chunk that holds one plain page replaced by a zstd stream of 1 GiB of
// zeros (about 40 KB) whose header keeps its small declared size.
func plantBomb(t *testing.T, in, out string) {
	t.Helper()
	b, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	payload, err := bombtest.Payload(format.Zstd, 1<<30, false)
	if err != nil {
		t.Fatal(err)
	}
	for col := 0; ; col++ {
		bomb, err := bombtest.Plant(b, col, format.Zstd, payload)
		if err == nil {
			if err := os.WriteFile(out, bomb, 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		if strings.Contains(err.Error(), "no column chunk") {
			t.Fatalf("no column of %s can carry a bomb: %v", in, err)
		}
	}
}

// TestHostile30High runs issue 30's high findings (H1–H7 and the
// decode-only case) as neighbours of the filed inputs, each with the
// checkResult contract plus a peak RSS under 500 MB and a run under 10 s;
// the memory classes (H3, H5, decode-only) run under ulimit -v 2 GiB.
func TestHostile30High(t *testing.T) {
	f := makeFixtures(t)
	S, R, d := bin.simulate, bin.report, f.dir
	outside := filepath.Join(d, "outside")
	os.MkdirAll(filepath.Join(outside, "odir"), 0o755)
	victim := filepath.Join(outside, "bashrc")
	os.WriteFile(victim, []byte("# a shell start-up file\n"), 0o644)
	// H1: results directories received from elsewhere, links planted
	sweepTable := func(dir string, metric float64) string {
		rows := []table.Row{
			{{K: "experiment", V: "mysweep"}, {K: "V", V: int64(4)}, {K: "m", V: metric}},
			{{K: "experiment", V: "mysweep"}, {K: "V", V: int64(8)}, {K: "m", V: -metric}},
			{{K: "experiment", V: "mysweep"}, {K: "V", V: int64(16)}, {K: "m", V: 0.5}},
		}
		os.MkdirAll(dir, 0o755)
		if err := results.WriteFile(filepath.Join(dir, "mysweep.parquet"), rows, results.Meta{results.KeyKind: "merged", results.KeyExperiment: "mysweep",
			results.KeySeed: "1 --scale 2}\\immediate\\openout9=owned.tex\\iffalse{"}); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	atFile := sweepTable(filepath.Join(d, "h1file"), 0.25)
	os.MkdirAll(filepath.Join(atFile, "csv"), 0o755)
	os.Symlink(victim, filepath.Join(atFile, "csv", "mysweep.csv"))
	os.Symlink(victim, filepath.Join(atFile, "report.md"))
	atDir := sweepTable(filepath.Join(d, "h1dir"), 0.25)
	os.Symlink(filepath.Join(outside, "odir"), filepath.Join(atDir, "figures"))
	badOut := sweepTable(filepath.Join(d, "h1bad"), 0.25)
	os.Mkdir(filepath.Join(badOut, "report.md"), 0o755) // a directory where report.md goes
	runOut := filepath.Join(d, "h1run")
	os.MkdirAll(runOut, 0o755)
	os.Symlink(filepath.Join(outside, "created-by-lock"), filepath.Join(runOut, ".lock"))
	os.Symlink(filepath.Join(outside, "odir"), filepath.Join(runOut, "cells"))
	// H3 and the decode-only case
	bombLog, bombTable := filepath.Join(d, "bomb.parquet"), filepath.Join(d, "bomb-table.parquet")
	plantBomb(t, f.log, bombLog)
	plantBomb(t, f.merged, bombTable)
	tenM, badRow := filepath.Join(d, "tenm.parquet"), filepath.Join(d, "badrow.parquet")
	listLog(t, tenM, 10_000_000, 2)
	listLog(t, badRow, 5, 1)
	// H6: a live writer's temporary file (its lock held by another
	// process) and a user's file resembling one, in log-synthetic's --out
	// directory
	h6 := filepath.Join(d, "h6")
	os.MkdirAll(h6, 0o755)
	live := filepath.Join(h6, ".log.parquet.tmp-1@otherhost-0123456789abcdef")
	user := filepath.Join(h6, ".log.parquet.tmp-1@otherhost-mine")
	os.WriteFile(live, []byte("a live writer's rows"), 0o644)
	os.WriteFile(user, []byte("the user's"), 0o644)
	if flock, err := exec.LookPath("flock"); err == nil {
		holder := exec.Command(flock, live, "sleep", "60")
		if err := holder.Start(); err == nil {
			defer holder.Process.Kill()
			time.Sleep(200 * time.Millisecond)
		}
	} else {
		t.Log("no flock(1): the live writer row checks the user's file only")
		os.Remove(live)
	}
	kept := func(paths ...string) func() string {
		return func() string {
			for _, p := range paths {
				if _, err := os.Stat(p); err != nil {
					return "removed " + p
				}
			}
			return ""
		}
	}
	h7 := sweepTable(filepath.Join(d, "h7"), 1e308)
	// H4: an implementation that says hello (protocol 2) and then waits
	ready := filepath.Join(d, "ready.sh")
	os.WriteFile(ready, []byte("#!/bin/sh\nread -r hello\nprintf '{\"op\":\"ready\",\"name\":\"quiet\",\"protocol\":2}\\n'\nread -r next\nsleep 5\n"), 0o755)
	cases := []hostile30{
		{"H1", []string{R, "build", atFile}, exitOK, "", func() string {
			if li, err := os.Lstat(filepath.Join(atFile, "csv", "mysweep.csv")); err != nil || !li.Mode().IsRegular() {
				return "csv/mysweep.csv is not a regular file in the directory"
			}
			return unchanged(t, outside)()
		}},
		{"H1", []string{R, "build", atDir}, exitUsage, "leads outside the output directory", unchanged(t, outside)},
		{"H1 (low: figures before a bad output)", []string{R, "build", badOut}, exitUsage, "report.md", noFileMatching(filepath.Join(badOut, "figures"), ".png")},
		{"H1 (low: a planted .lock link)", []string{S, "run", "leviathan-table1", "--seed", "1", "--out", runOut}, exitUsage, "leads outside", func() string {
			if _, err := os.Lstat(filepath.Join(outside, "created-by-lock")); err == nil {
				return "the .lock link created a file outside --out"
			}
			return unchanged(t, outside)()
		}},
		{"H2", []string{R, "paper", atFile, "--out", filepath.Join(atFile, "paper")}, exitOK, "",
			fileLacks(filepath.Join(atFile, "paper", "generated", "provenance.tex"), `\immediate`, `\openout`, `\iffalse`)},
		{"H3", []string{S, "--mem-budget", "0.001", "validate-log", bombLog}, exitUsage, "decompression bomb", nil},
		{"H3", []string{S, "--mem-budget", "0.001", "replay", "--decode-only", bombLog}, exitUsage, "decompression bomb", nil},
		{"H3", []string{R, "export", bombTable}, exitUsage, "decompression bomb", nil},
		{"H3", []string{S, "validate-log", bombLog}, exitUsage, "decompression bomb", nil},
		{"also", []string{S, "--mem-budget", "1", "replay", "--decode-only", tenM}, exitUsage, "--mem-budget", nil},
		{"also", []string{S, "replay", "--decode-only", badRow}, 0, "", nil},
		{"H4", []string{S, "--mem-budget", "1", "check", "--external", ready, "--mode", "tree", "--source", "markov:V=64,order=1", "--batch", "8192", "--k", "64", "--gamma", "16", "--seed", "1"},
			exitUsage, "draft trees", nil},
		{"H5", []string{S, "--mem-budget", "0.05", "check", "--source", "markov:V=32,order=3", "--seed", "1"}, exitUsage, "tallies", nil},
		// the finding's own command: refused before the pair is drawn
		{"H5", []string{S, "--mem-budget", "1", "check", "--source", "markov:V=64,order=3", "--seed", "1"}, exitUsage, "tallies", nil},
		{"H5", []string{S, "--mem-budget", "1", "check", "--external", ready, "--mode", "step", "--source", "markov:V=64,order=3", "--seed", "1"}, exitUsage, "tallies", nil},
		{"H6", []string{S, "log-synthetic", "--source", "markov:V=4,order=1,seed=7", "--steps", "5", "--seed", "1", "--out", filepath.Join(h6, "log.parquet")},
			exitOK, "", kept(live, user)},
		{"H7", []string{R, "build", h7}, exitOK, "", nil},
	}
	// the decode-only case: whatever validate-log says of the bad row,
	// decode-only says too (its exit code, not a throughput)
	v := run(t, d, S, "validate-log", badRow)
	if v.code == exitOK {
		t.Fatalf("validate-log calls the bad row valid: %s", v.stdout)
	}
	for i, c := range cases {
		if slices.Contains(c.cmd, badRow) {
			cases[i].code = v.code
		}
	}
	for _, c := range cases {
		t.Run(c.finding+" "+strings.Join(c.cmd[1:], " "), func(t *testing.T) {
			cmd := c.cmd
			if c.finding == "H3" || c.finding == "H4" || c.finding == "H5" || c.finding == "also" {
				// the memory classes run under 2 GiB of address space, so a
				// bomb decoded or a tally allocated fails here, not the machine
				cmd = append([]string{"/bin/sh", "-c", `ulimit -v 2097152 && exec "$0" "$@"`}, cmd...)
			}
			r := run(t, d, cmd[0], cmd[1:]...)
			if strings.Contains(strings.Join(c.cmd, " "), "validate-log") {
				r.stdout = "" // its report is on stdout by design
			}
			t.Logf("exit %d, peak RSS %d MiB, %v: %s", r.code, r.rss>>20, r.wall.Round(time.Millisecond), firstLines(r.stderr, 1))
			checkResult(t, c.cmd, r, []int{c.code}, false)
			if c.says != "" && !strings.Contains(r.stderr, c.says) {
				t.Errorf("stderr lacks %q: %s", c.says, firstLines(r.stderr, 2))
			}
			if r.rss > 500<<20 || r.wall > 10*time.Second {
				t.Errorf("peak RSS %d MiB, %v; want under 500 MB and 10 s", r.rss>>20, r.wall.Round(time.Millisecond))
			}
			if strings.Contains(r.stdout, "decoded") && c.code != exitOK {
				t.Errorf("a throughput for a refused log: %s", firstLines(r.stdout, 1))
			}
			if c.after != nil {
				if msg := c.after(); msg != "" {
					t.Error(msg)
				}
			}
		})
	}
}
