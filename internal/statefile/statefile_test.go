package statefile

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/specsim/specsim/internal/diag"
)

func header(shard int) Header {
	return Header{Config: map[string][]string{"algo": {"token"}, "gamma": {"3"}, "param": {"a=1", "b=2"}}, Given: []string{"algo"},
		Seed: 5, Shard: shard, Shards: 4, Revision: "abc", TrialsDone: 50000, TrialsWanted: 50000}
}

// reseal recomputes the checksum of a state file's bytes after an edit,
// so a test reaches the checks behind it.
func reseal(b []byte) []byte {
	body := b[:len(b)-suffix]
	sum := sha256.Sum256(body)
	return append(append([]byte{}, body...), sum[:]...)
}

// TestRoundTrip: a file written is read back with the same header and
// payload, and its bytes are deterministic.
func TestRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s0.state")
	payload := []byte("tallies\x00\x01\x02")
	if err := Write(path, header(2), payload); err != nil {
		t.Fatal(err)
	}
	f, err := Read(path, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	want := header(2)
	want.Format = Format
	if f.Header.Shard != 2 || f.Header.Seed != 5 || f.Header.Format != Format || !bytes.Equal(f.Payload, payload) ||
		strings.Join(f.Header.Config["param"], ",") != "a=1,b=2" || f.Header.Revision != "abc" {
		t.Fatalf("read back %+v %q, wrote %+v %q", f.Header, f.Payload, want, payload)
	}
	a, _ := Encode(header(2), payload)
	b, _ := os.ReadFile(path)
	if !bytes.Equal(a, b) {
		t.Fatal("Encode is not deterministic")
	}
}

// TestDamaged: every truncation and every single-bit flip of a state
// file is refused with a usage error (never a panic, never accepted).
func TestDamaged(t *testing.T) {
	b, err := Encode(header(0), bytes.Repeat([]byte{7}, 40))
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; n < len(b); n++ {
		if _, _, err := Decode(b[:n]); err == nil {
			t.Fatalf("truncated to %d of %d bytes: accepted", n, len(b))
		}
	}
	for i := 0; i < len(b)*8; i++ {
		c := append([]byte{}, b...)
		c[i/8] ^= 1 << (i % 8)
		if _, _, err := Decode(c); err == nil {
			t.Fatalf("bit %d flipped: accepted", i)
		}
	}
}

// TestCraftedLengths: a file whose checksum matches but whose lengths or
// revision are wrong is refused by the check that names it.
func TestCraftedLengths(t *testing.T) {
	b, _ := Encode(header(0), []byte("payload"))
	cases := map[string]func(c []byte){
		"state format revision 9":  func(c []byte) { binary.BigEndian.PutUint32(c[len(Magic):], 9) },
		"header length 4294967295": func(c []byte) { binary.BigEndian.PutUint32(c[len(Magic)+4:], 1<<32-1) },
		"payload length":           func(c []byte) { c[len(c)-suffix-len("payload")-1]++ },
		"not a specsim check":      func(c []byte) { c[0] = 'X' },
	}
	for want, edit := range cases {
		c := append([]byte{}, b...)
		edit(c)
		_, _, err := Decode(reseal(c))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v", want, err)
		}
	}
}

// TestReadRefuses: a file above the budget, a missing file and a
// directory are usage errors naming the file.
func TestReadRefuses(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "big.state")
	if err := Write(path, header(0), make([]byte, 4096)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path   string
		budget int64
	}{{path, 1024}, {filepath.Join(dir, "none.state"), 0}, {dir, 0}} {
		_, err := Read(c.path, c.budget)
		if !errors.Is(err, diag.ErrUsage) || !strings.Contains(err.Error(), filepath.Base(c.path)) {
			t.Errorf("Read(%s, %d) = %v; want a usage error naming it", c.path, c.budget, err)
		}
	}
}

// TestCompatible: the four shards in any order merge; three of four, a
// shard twice, another seed, configuration or implementation, and an
// unfinished shard are each refused with the reason.
func TestCompatible(t *testing.T) {
	set := func(edit func(fs []File)) []File {
		var fs []File
		for _, i := range []int{2, 0, 3, 1} {
			fs = append(fs, File{Path: "s" + string(rune('0'+i)), Header: header(i)})
		}
		edit(fs)
		return fs
	}
	if err := Compatible(set(func([]File) {})); err != nil {
		t.Fatalf("a full set refused: %v", err)
	}
	cases := map[string]func(fs []File) []File{
		"shard(s) 1 of 4 missing":     func(fs []File) []File { return fs[:3] },
		"shard 2 of 4 is given twice": func(fs []File) []File { return append(fs, fs[0]) },
		"seed 5 against 6":            func(fs []File) []File { fs[1].Header.Seed = 6; return fs },
		`--gamma ["3"] against ["4"]`: func(fs []File) []File {
			fs[3].Header.Config = map[string][]string{"algo": {"token"}, "gamma": {"4"}, "param": {"a=1", "b=2"}}
			return fs
		},
		`implementation "" (protocol 0)`:  func(fs []File) []File { fs[2].Header.Implementation = "numpy"; return fs },
		"unfinished (10 of 50000 trials)": func(fs []File) []File { fs[0].Header.TrialsDone = 10; return fs },
		"shard count 4 against 5":         func(fs []File) []File { fs[1].Header.Shards = 5; return fs },
		"no state file given":             func([]File) []File { return nil },
	}
	for want, edit := range cases {
		err := Compatible(edit(set(func([]File) {})))
		if !errors.Is(err, diag.ErrUsage) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v", want, err)
		}
	}
}
