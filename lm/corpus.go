package lm

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Corpus kinds.
const (
	// Code is the Go toolchain's own source tree (GOROOT/src: the non-test
	// .go files outside cmd/, vendor/ and testdata/, in path order).
	// Licence: BSD-3-Clause (GOROOT/LICENSE).
	Code = "code"
	// Prose is the licence texts of /usr/share/common-licenses, which
	// Debian's base-files package installs on every Debian system. Each
	// text permits verbatim copying and distribution (for example the
	// GPL's "Everyone is permitted to copy and distribute verbatim copies
	// of this license document").
	Prose = "prose"
)

// Corpus describes the text a model was trained on: its provenance.
type Corpus struct {
	Kind    string `json:"kind"`
	Root    string `json:"root"`
	Licence string `json:"licence"`
	Files   int    `json:"files"`
	Bytes   int64  `json:"bytes"`
	// SHA256 hashes every file's relative path, size and content in order.
	SHA256 string `json:"sha256"`
	// Heldout counts the files kept out of training for prompts.
	Heldout int `json:"heldout_files"`
	paths   []string
}

// DefaultRoot returns the default directory of a corpus kind.
func DefaultRoot(kind string) string {
	switch kind {
	case Code:
		root := build.Default.GOROOT
		if root == "" {
			root = "/usr/local/go"
		}
		return filepath.Join(root, "src")
	case Prose:
		return "/usr/share/common-licenses"
	}
	return ""
}

// LoadCorpus reads up to maxBytes of the corpus kind from root (the
// kind's default when empty), whole files only, in path order, and returns
// its description and the files' contents.
func LoadCorpus(kind, root string, maxBytes int64) (Corpus, [][]byte, error) {
	if kind != Code && kind != Prose {
		return Corpus{}, nil, fmt.Errorf("corpus %q: unknown kind; use %s or %s", kind, Code, Prose)
	}
	if root == "" {
		root = DefaultRoot(kind)
	}
	c := Corpus{Kind: kind, Root: root}
	switch kind {
	case Code:
		c.Licence = "BSD-3-Clause (Go toolchain source, " + filepath.Join(filepath.Dir(root), "LICENSE") + ")"
	case Prose:
		c.Licence = "verbatim copying permitted by each licence text (Debian base-files)"
	}
	var paths []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			rel, _ := filepath.Rel(root, p)
			if kind == Code && (rel == "cmd" || name == "vendor" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if kind == Code && (!strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go")) {
			return nil
		}
		paths = append(paths, p)
		return nil
	})
	if err != nil {
		return Corpus{}, nil, fmt.Errorf("corpus %s: reading %s: %w (set root= to a directory that exists)", kind, root, err)
	}
	sort.Strings(paths)
	h := sha256.New()
	var texts [][]byte
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return Corpus{}, nil, fmt.Errorf("corpus %s: %w", kind, err)
		}
		if maxBytes > 0 && c.Bytes+int64(len(b)) > maxBytes && len(texts) > 0 {
			break
		}
		rel, _ := filepath.Rel(root, p)
		fmt.Fprintf(h, "%s\x00%d\x00", rel, len(b))
		h.Write(b)
		texts = append(texts, b)
		c.paths = append(c.paths, rel)
		c.Bytes += int64(len(b))
	}
	if len(texts) < 2 {
		return Corpus{}, nil, fmt.Errorf("corpus %s: %d files under %s; need at least 2 (one is held out for prompts)", kind, len(texts), root)
	}
	c.Files = len(texts)
	c.SHA256 = hex.EncodeToString(h.Sum(nil))
	for i := range texts {
		if heldOut(i) {
			c.Heldout++
		}
	}
	return c, texts, nil
}

// heldOut reports whether file i is kept out of training: every fifth file
// (and file 1, so that two-file corpora still hold one out).
func heldOut(i int) bool { return i%5 == 4 || i == 1 }
