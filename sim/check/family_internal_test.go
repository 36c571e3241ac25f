package check

import (
	"strings"
	"testing"
)

// TestFamilyDiff: equal lists are accepted; a list lacking a family, one
// with a family in excess, and one in another order are refused, naming
// the families.
func TestFamilyDiff(t *testing.T) {
	want := []string{"pool", "pit", "hashed"}
	if err := familyDiff(want, want); err != nil {
		t.Errorf("equal lists: %v", err)
	}
	for _, c := range []struct {
		have []string
		says string
	}{
		{[]string{"pool", "pit"}, `it lacks families ["hashed"])`},
		{[]string{"pool", "pit", "hashed", "law"}, `it has families ["law"] this build does not)`},
		{[]string{"pit", "pool", "hashed"}, "its families are in another order)"},
		{nil, `it lacks families ["pool" "pit" "hashed"])`},
	} {
		err := familyDiff(c.have, want)
		if err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%q against %q: error %v, want one saying %q", c.have, want, err, c.says)
		}
	}
}
