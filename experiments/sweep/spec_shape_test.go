package sweep

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// Issue 23: TOML the parser takes quadratic time in (deep inline tables,
// long dotted keys) is refused at once, before parsing; an axis of 100k
// values parses in linear time (its duplicate check was quadratic: 47 s),
// still refusing a duplicate; strings and comments hold brackets and dots
// freely.
func TestSpecShapeBounded(t *testing.T) {
	t.Parallel()
	for _, text := range []string{
		"experiment = \"verify\"\nx = " + strings.Repeat("{a=", 4000) + "1" + strings.Repeat("}", 4000) + "\n",
		"experiment = \"verify\"\nx = " + strings.Repeat("[", 4000) + "1" + strings.Repeat("]", 4000) + "\n",
		"experiment = \"verify\"\n" + strings.Repeat("a.", 4000) + "a = 1\n",
		"[" + strings.Repeat("a.", 4000) + "a]\nb = 1\n",
		"experiment = \"verify\"\nx = {" + strings.Repeat("k.", 40) + "k = 1}\n",
	} {
		start := time.Now()
		_, err := ParseSpec(text)
		if err == nil || !strings.Contains(err.Error(), "TOML:") || !strings.Contains(err.Error(), "32") {
			t.Errorf("%.40q…: %v", text, err)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("%.40q…: refused after %v", text, d)
		}
	}
	ok := "experiment = \"verify\" # a comment with [[{ and a.b.c.d.e\n[axes]\nsource = \"markov:V=4,order=1\" # ]]\n" +
		"algo = ['token', \"bl[o]ck{\"]\ngamma = [1, 2]\nparam.lenience = [0.25, 0.5]\nnote = '''\n" + strings.Repeat("x.", 100) + "\n'''\n"
	if err := checkTOMLShape(ok); err != nil {
		t.Errorf("a spec with brackets and dots in strings and comments: %v", err)
	}
	var b strings.Builder
	b.WriteString("experiment = \"verify\"\n[axes]\nsource = \"markov:V=4,order=1\"\nalgo = [\"token\"]\ntrials = [")
	for i := range 100000 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(1000 + i))
	}
	start := time.Now()
	if _, err := ParseSpec(b.String() + "]\n"); err != nil {
		t.Fatalf("100k distinct values: %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("an axis of 100k values parsed in %v", d)
	}
	if _, err := ParseSpec(b.String() + ",1000]\n"); err == nil || !strings.Contains(err.Error(), "lists 1000 twice") {
		t.Errorf("a duplicate at the end of 100k values: %v", err)
	}
}
