package casestudy

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

type commit struct {
	Role   string `json:"role"`
	Commit string `json:"commit"`
	File   string `json:"file"`
}

type entry struct {
	Name     string   `json:"name"`
	Repo     string   `json:"repo"`
	Licence  string   `json:"licence"`
	Function string   `json:"function"`
	Bug      string   `json:"bug"`
	Thread   []string `json:"thread"`
	Wrapper  string   `json:"wrapper"`
	Mode     string   `json:"mode"`
	Flags    []string `json:"flags"`
	Also     []string `json:"also"`
	Commits  []commit `json:"commits"`
}

type row struct {
	Name, Role, Commit, Status, Verdict string
	Trials                              int
	MinDetectableTV                     *float64 `json:"min_detectable_tv"`
}

func readManifest(t *testing.T) []entry {
	t.Helper()
	b, err := os.ReadFile("manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Samplers []entry `json:"samplers"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("manifest.json: %v", err)
	}
	return m.Samplers
}

var (
	fullHash = regexp.MustCompile(`^[0-9a-f]{40}$`)
	ghURL    = regexp.MustCompile(`^https://github\.com/[A-Za-z0-9._-]+/[A-Za-z0-9._-]+/(issues|pull|commit)/[0-9a-f]+$`)
)

// TestManifest checks every entry's properties: a unique name, a buggy and
// exactly one fixed commit, each a full hash, public threads on GitHub, a
// licence, a wrapper function that exists and a mode the harness serves.
func TestManifest(t *testing.T) {
	seen := map[string]bool{}
	for _, e := range readManifest(t) {
		if e.Name == "" || seen[e.Name] {
			t.Errorf("entry %q: names must be non-empty and unique", e.Name)
		}
		seen[e.Name] = true
		roles := map[string]int{}
		for _, c := range e.Commits {
			roles[c.Role]++
			if !fullHash.MatchString(c.Commit) || c.File == "" {
				t.Errorf("%s %s: commit %q must be a full 40-hex hash with a file", e.Name, c.Role, c.Commit)
			}
		}
		if roles["buggy"] < 1 || roles["fixed"] != 1 {
			t.Errorf("%s: roles %v; each entry needs a buggy commit and one fixed commit", e.Name, roles)
		}
		if len(e.Thread) == 0 || e.Licence == "" || e.Bug == "" || e.Function == "" {
			t.Errorf("%s: thread, licence, bug and function are required", e.Name)
		}
		for _, u := range e.Thread {
			if !ghURL.MatchString(u) || !strings.Contains(u, "/"+e.Repo+"/") {
				t.Errorf("%s: thread %q is not an issue, pull request or commit of %s", e.Name, u, e.Repo)
			}
		}
		checkWrapper(t, e)
	}
	if len(seen) < 8 {
		t.Errorf("the manifest has %d entries; the case study reports at least 8", len(seen))
	}
}

func checkWrapper(t *testing.T, e entry) {
	t.Helper()
	file, fn, ok := strings.Cut(e.Wrapper, ":")
	src, err := os.ReadFile(filepath.Join("wrappers", file))
	if !ok || err != nil || !strings.Contains(string(src), "\ndef "+fn+"(") {
		t.Errorf("%s: wrapper %q is not a function of casestudy/wrappers/", e.Name, e.Wrapper)
	}
	if e.Mode != "verify" && e.Mode != "step" && e.Mode != "tree" {
		t.Errorf("%s: mode %q; use verify, step or tree", e.Name, e.Mode)
	}
}

// TestResultsCoverManifest checks that the committed results have one row
// for every commit of the manifest, each checked or with its error line.
func TestResultsCoverManifest(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("results", "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Command, Revision, Date string
		Rows                    []row
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	if res.Command == "" || res.Revision == "" || res.Date == "" {
		t.Errorf("results.json must say its command, revision and date: %q %q %q", res.Command, res.Revision, res.Date)
	}
	got := map[string]row{}
	for _, r := range res.Rows {
		got[r.Name+"@"+r.Commit] = r
	}
	for _, e := range readManifest(t) {
		for _, c := range e.Commits {
			r, ok := got[e.Name+"@"+c.Commit]
			if !ok || r.Role != c.Role {
				t.Errorf("results.json has no row for %s %s %s; rerun casestudy/run.py", e.Name, c.Role, c.Commit[:12])
			}
			if ok && r.Status == "checked" && (r.MinDetectableTV == nil || r.Trials <= 0) {
				t.Errorf("%s %s: a checked row gives its trials and minimum detectable TV", e.Name, c.Role)
			}
		}
	}
}

// TestRunOneEntry runs run.py on jaymody-speculative-sampling (NumPy, step
// mode) at 20,000 trials with seed 1: the buggy commit (greedy sampling
// with softmax ratios) must be violated and the fixed commit not detected.
// The run is deterministic (the harness's seed fixes every coin, the
// wrapper seeds NumPy from the batch), so the fixed row's outcome is that
// of this seed, not a chance event of the test. It needs a mirror
// (SPECSIM_CASESTUDY_MIRROR, a directory of OWNER+NAME/repo bare git
// repositories) or SPECSIM_CASESTUDY_NETWORK=1 (git from GitHub), and a
// Python with NumPy; otherwise it skips, saying which.
func TestRunOneEntry(t *testing.T) {
	mirror := os.Getenv("SPECSIM_CASESTUDY_MIRROR")
	if mirror == "" && os.Getenv("SPECSIM_CASESTUDY_NETWORK") != "1" {
		t.Skip("no SPECSIM_CASESTUDY_MIRROR (a directory of OWNER+NAME/repo mirrors) and no SPECSIM_CASESTUDY_NETWORK=1; the upstream code is fetched, never committed")
	}
	if mirror != "" {
		if _, err := os.Stat(filepath.Join(mirror, "jaymody+speculative-sampling")); err != nil {
			t.Skipf("the mirror %s has no jaymody+speculative-sampling", mirror)
		}
	}
	py := numpyPython(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "simulate")
	build := exec.Command("go", "build", "-o", bin, "./cmd/simulate")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(py, "casestudy/run.py", "--only", "jaymody-speculative-sampling", "--trials", "20000",
		"--simulate", bin, "--python", py, "--work", filepath.Join(dir, "work"), "--out", dir)
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("run.py: %v\n%s", err, out)
	}
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var res struct{ Rows []row }
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"buggy": "violated", "fixed": "not_detected"}
	if len(res.Rows) != 2 {
		t.Fatalf("run.py wrote %d rows, want 2 (buggy, fixed): %+v", len(res.Rows), res.Rows)
	}
	for _, r := range res.Rows {
		if r.Status != "checked" || r.Verdict != want[r.Role] || r.Trials != 20000 {
			t.Errorf("%s %s: status %s verdict %s trials %d; want checked, %s, 20000", r.Role, r.Commit[:12], r.Status, r.Verdict, r.Trials, want[r.Role])
		}
	}
}

// numpyPython returns $SPECSIM_PYTHON, /usr/bin/python3 or python3, the
// first that imports numpy, or skips the test saying so.
func numpyPython(t *testing.T) string {
	t.Helper()
	for _, c := range []string{os.Getenv("SPECSIM_PYTHON"), "/usr/bin/python3", "python3"} {
		if c != "" && exec.Command(c, "-c", "import numpy").Run() == nil {
			return c
		}
	}
	t.Skip("no Python with numpy (tried $SPECSIM_PYTHON, /usr/bin/python3, python3); apt-get install python3-numpy")
	return ""
}

// TestTable checks the paper's table against the committed results: one
// row per result, a checked row's verdict and trials as run.py recorded
// them, a row that ended on an error named by its exception, never a
// verdict.
func TestTable(t *testing.T) {
	res, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	tab := Table(res)
	if len(tab.Rows) != len(res.Rows) || len(res.Rows) == 0 {
		t.Fatalf("%d table rows for %d results", len(tab.Rows), len(res.Rows))
	}
	for i, r := range res.Rows {
		got := tab.Rows[i]
		switch r.Status {
		case "checked":
			if got[5] != strings.ReplaceAll(r.Verdict, "_", " ") || got[4] != strconv.Itoa(r.Trials) {
				t.Errorf("%s %s: verdict %q trials %q; results say %s, %d", r.Name, r.Role, got[5], got[4], r.Verdict, r.Trials)
			}
		case "error":
			if !strings.HasPrefix(got[5], "raised ") || got[4] != "-" || got[7] != "-" {
				t.Errorf("%s %s: a run that raised shows %q, trials %q, TV %q; want the exception and no figures", r.Name, r.Role, got[5], got[4], got[7])
			}
		}
	}
}
