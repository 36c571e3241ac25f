package report

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/specsim/specsim/paper"
)

// WritePaper keeps a paper.tex an author edited ('report paper') and
// rewrites a stale one in the job's own output ('report reproduce', refresh),
// so a rerun with a newer binary builds the embedded sources, not the last
// run's.
func TestWritePaperRefresh(t *testing.T) {
	b, err := LoadBundle(tiny(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, refresh := range []bool{false, true} {
		dir := t.TempDir()
		stale := []byte("% an older paper.tex\n")
		for _, name := range []string{"paper.tex", "refs.bib", "casestudy.tex"} {
			if err := os.WriteFile(filepath.Join(dir, name), stale, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := WritePaper(b, dir, refresh); err != nil {
			t.Fatal(err)
		}
		for name, embedded := range map[string]string{"paper.tex": paper.Source, "refs.bib": paper.Bib, "casestudy.tex": paper.CaseStudy} {
			got, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			want := string(stale)
			if refresh {
				want = embedded
			}
			if string(got) != want {
				t.Errorf("refresh %v: %s has %d bytes, want %d (the %s)", refresh, name, len(got), len(want), map[bool]string{false: "kept copy", true: "embedded source"}[refresh])
			}
		}
	}
}
