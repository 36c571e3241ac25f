package statefile

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/specsim/specsim/internal/diag"
)

// Compatible checks that files are the Shards shards of one check, each
// once and each finished: the same configuration, seed, implementation and
// protocol, shard count and trials per shard count as the first file, and
// shard indices 0..N-1 each present exactly once. The error (a usage
// error) names the files and what differs, or the missing shards.
func Compatible(files []File) error {
	if len(files) == 0 {
		return diag.Usage(fmt.Errorf("--merge: no state file given; give the N state files of the shards"))
	}
	a := files[0]
	seen := make(map[int]string, len(files))
	for _, f := range files {
		if err := sameCheck(a, f); err != nil {
			return diag.Usage(err)
		}
		h := f.Header
		if prev, dup := seen[h.Shard]; dup {
			return diag.Usage(fmt.Errorf("--merge: shard %d of %d is given twice (%s and %s); give each shard's state file once", h.Shard, h.Shards, prev, f.Path))
		}
		seen[h.Shard] = f.Path
		if !h.Finished() {
			return diag.Usage(fmt.Errorf("--merge: %s holds shard %d of %d unfinished (%d of %d trials); rerun it with the same --state-out to finish it", f.Path, h.Shard, h.Shards, h.TrialsDone, h.TrialsWanted))
		}
	}
	var missing []string
	for i := range a.Header.Shards {
		if _, ok := seen[i]; !ok {
			missing = append(missing, fmt.Sprint(i))
		}
	}
	if len(missing) > 0 {
		return diag.Usage(fmt.Errorf("--merge: shard(s) %s of %d missing (%d files given); give every shard's state file", strings.Join(missing, ", "), a.Header.Shards, len(files)))
	}
	return nil
}

// sameCheck returns an error naming what differs between the checks of a
// and f, or nil when they are shards of one check.
func sameCheck(a, f File) error {
	x, y := a.Header, f.Header
	differ := func(what, u, v string) error {
		return fmt.Errorf("--merge: %s and %s are not shards of one check: %s %s against %s; merge only the shards of one run", a.Path, f.Path, what, u, v)
	}
	switch {
	case x.Seed != y.Seed:
		return differ("seed", fmt.Sprint(x.Seed), fmt.Sprint(y.Seed))
	case x.Shards != y.Shards:
		return differ("shard count", fmt.Sprint(x.Shards), fmt.Sprint(y.Shards))
	case x.Implementation != y.Implementation || x.Protocol != y.Protocol:
		return differ("implementation", fmt.Sprintf("%q (protocol %d)", x.Implementation, x.Protocol), fmt.Sprintf("%q (protocol %d)", y.Implementation, y.Protocol))
	case x.TrialsWanted != y.TrialsWanted && x.Shard == y.Shard:
		return differ("trials of the shard", fmt.Sprint(x.TrialsWanted), fmt.Sprint(y.TrialsWanted))
	}
	if !maps.EqualFunc(x.Config, y.Config, slices.Equal) {
		name := ConfigDiff(x.Config, y.Config)
		return differ("--"+name, fmt.Sprintf("%q", x.Config[name]), fmt.Sprintf("%q", y.Config[name]))
	}
	return nil
}

// ConfigDiff returns the first flag name, in sorted order, whose values
// differ between a and b ("" when none do).
func ConfigDiff(a, b map[string][]string) string {
	names := slices.Sorted(maps.Keys(a))
	for n := range b {
		if _, ok := a[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		u, ok1 := a[n]
		v, ok2 := b[n]
		if ok1 != ok2 || !slices.Equal(u, v) {
			return n
		}
	}
	return ""
}
