package lm

import (
	"bytes"
	"encoding/gob"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Issue 23: a damaged model cache is a miss, never a panic or an endless
// lookup: each structural damage below (a hash table with no empty slot,
// a follower span or token outside its table, a merge of a later token,
// a NaN probability, a truncated file) makes NewPair train again, and the
// pair it returns samples.
func TestDamagedCache(t *testing.T) {
	dir := t.TempDir()
	spec, draft := "prose:order=3,V=300,bytes=30000", "order=2,T=0.002"
	if _, err := NewPair(spec, draft, Options{CacheDir: dir}); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.gob"))
	if len(files) != 1 {
		t.Fatalf("cache files %v", files)
	}
	good, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	decode := func() cached {
		var c cached
		if err := gob.NewDecoder(bytes.NewReader(good)).Decode(&c); err != nil {
			t.Fatal(err)
		}
		return c
	}
	for name, damage := range map[string]func(c *cached){
		"no empty slot": func(c *cached) {
			for i := range c.P.Levels[0].Keys {
				c.P.Levels[0].Keys[i] = uint64(i) + 1
			}
		},
		"span out of range": func(c *cached) { l := &c.P.Levels[1]; l.Start[len(l.Start)-1] += 1000 },
		"token outside V":   func(c *cached) { c.Q.Levels[0].Tok[0] = 1 << 20 },
		"value index":       func(c *cached) { l := &c.P.Levels[0]; l.Vals[firstKey(l.Keys)] = -3 },
		"a later merge":     func(c *cached) { c.Merges[0] = [2]int32{299, 1} },
		"NaN unigram":       func(c *cached) { c.P.Uni[5] = math.NaN() },
		"short unigrams":    func(c *cached) { c.Q.Uni = c.Q.Uni[:10] },
		"held-out token":    func(c *cached) { c.Heldout[0][0] = -1 },
		"no draft model":    func(c *cached) { c.Q = nil },
	} {
		c := decode()
		damage(&c)
		var b bytes.Buffer
		if err := gob.NewEncoder(&b).Encode(&c); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(files[0], b.Bytes(), 0o644)
		checkPair(t, name, spec, draft, dir)
	}
	os.WriteFile(files[0], good[:len(good)/2], 0o644)
	checkPair(t, "truncated", spec, draft, dir)
}

func firstKey(keys []uint64) int {
	for i, k := range keys {
		if k != 0 {
			return i
		}
	}
	return 0
}

// checkPair builds the pair from the damaged cache within a minute and
// samples from it: it must have been trained again.
func checkPair(t *testing.T, name, spec, draft, dir string) {
	t.Helper()
	done := make(chan *Pair, 1)
	go func() {
		p, err := NewPair(spec, draft, Options{CacheDir: dir})
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
		done <- p
	}()
	select {
	case p := <-done:
		if p == nil {
			return
		}
		if p.Provenance.Cached {
			t.Errorf("%s: the damaged cache was used", name)
		}
		ps, err := p.Prompts(1, 8)
		if err != nil {
			t.Fatal(err)
		}
		row := make([]float64, p.P.Vocab())
		for _, m := range []interface{ Next([]int, []float64) }{p.P, p.Q} {
			m.Next(ps[0], row)
			s := 0.0
			for _, x := range row {
				s += x
			}
			if math.Abs(s-1) > 1e-9 {
				t.Errorf("%s: a row sums to %g", name, s)
			}
		}
	case <-time.After(time.Minute):
		t.Fatalf("%s: NewPair did not return", name)
	}
}
