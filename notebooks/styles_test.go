package notebooks

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"testing"

	"github.com/specsim/specsim/internal/fsutil"
	"github.com/specsim/specsim/plots"
)

var regenStyles = flag.Bool("regen-styles", false, "rewrite styles.json from plots.NamedStyles")

// styles.json is plots.NamedStyles as JSON, so the notebooks draw each rule
// in the report's colour and marker; when a style changes, this test fails
// until 'go test ./notebooks -run TestStylesJSON -regen-styles' rewrites it.
func TestStylesJSON(t *testing.T) {
	want, err := json.MarshalIndent(plots.NamedStyles(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, '\n')
	if *regenStyles {
		if err := fsutil.WriteBytes("styles.json", want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile("styles.json")
	if err != nil {
		t.Fatalf("%v; run 'go test ./notebooks -run TestStylesJSON -regen-styles'", err)
	}
	if !bytes.Equal(got, want) {
		t.Error("styles.json differs from plots.NamedStyles; run 'go test ./notebooks -run TestStylesJSON -regen-styles'")
	}
}
