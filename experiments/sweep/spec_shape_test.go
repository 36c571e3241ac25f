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

// Issue 30 (M7): a generator of nesting shapes (table headers, arrays of
// tables, dotted keys, inline tables, each 1 to 31 parts deep) repeated
// to just above MaxTOMLKeys keys is refused before parsing with the bound
// named; the same shape just under the bound reaches the parser and is
// judged on its keys (unknown ones refused), each within a second (a
// 4 MiB spec of 31-part headers took 17 s and 1.1 GB).
func TestSpecKeysBounded(t *testing.T) {
	t.Parallel()
	path := func(d, i int) string {
		parts := []string{"t" + strconv.Itoa(i)}
		for j := 1; j < d; j++ {
			parts = append(parts, "k"+strconv.Itoa(j))
		}
		return strings.Join(parts, ".")
	}
	shapes := map[string]func(d, i int) string{
		"table header":    func(d, i int) string { return "[" + path(d, i) + "]\n" },
		"array of tables": func(d, i int) string { return "[[" + path(d, i) + "]]\n" },
		"dotted key":      func(d, i int) string { return path(d, i) + " = 1\n" },
		"inline table":    func(d, i int) string { return "x" + strconv.Itoa(i) + " = {" + path(d, i) + " = 1}\n" },
	}
	for name, shape := range shapes {
		for _, d := range []int{1, 2, 8, 31} {
			perLine := d // the keys one line names
			if name == "inline table" {
				perLine = d + 1
			}
			for _, over := range []bool{false, true} {
				n := (MaxTOMLKeys - 1) / perLine // with the experiment line, at most MaxTOMLKeys
				if over {
					n = MaxTOMLKeys/perLine + 2
				}
				var b strings.Builder
				b.WriteString("experiment = \"verify\"\n")
				for i := range n {
					b.WriteString(shape(d, i))
				}
				start := time.Now()
				_, err := ParseSpec(b.String())
				refused := err != nil && strings.Contains(err.Error(), "more than 4096 keys")
				if refused != over || err == nil {
					t.Errorf("%s %d deep, %d lines (over the bound: %v): %v", name, d, n, over, err)
				}
				if dt := time.Since(start); dt > time.Second {
					t.Errorf("%s %d deep, %d lines: %v", name, d, n, dt)
				}
			}
		}
	}
}
