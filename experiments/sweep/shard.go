package sweep

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/specsim/specsim/internal/diag"
)

// Shard is the part i of n of a sweep: the cells whose index ≡ i (mod n).
// The assignment depends only on the cell index, so the union of the
// shards 0..n-1 is every cell exactly once.
type Shard struct{ I, N int }

// All is the single shard holding every cell.
var All = Shard{0, 1}

// String renders "i/n".
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.I, s.N) }

// Owns reports whether cell index idx belongs to s.
func (s Shard) Owns(idx int) bool { return idx%s.N == s.I }

// Check reports a shard outside 0 <= i < n.
func (s Shard) Check() error {
	if s.N < 1 || s.I < 0 || s.I >= s.N {
		return fmt.Errorf("shard %d/%d: use i/n with n >= 1 and 0 <= i < n", s.I, s.N)
	}
	return nil
}

// ParseShard parses "i/n" (0-based i).
func ParseShard(text string) (Shard, error) {
	a, b, ok := strings.Cut(strings.TrimSpace(text), "/")
	i, err1 := strconv.Atoi(strings.TrimSpace(a))
	n, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil {
		return Shard{}, diag.Param("shard", " %q: write i/n, e.g. 0/4 (0-based)", text)
	}
	s := Shard{i, n}
	if err := s.Check(); err != nil {
		return Shard{}, diag.Param("shard", " %q: %w", text, err)
	}
	return s, nil
}

// Environment variables read by ShardFromEnv.
const (
	// EnvShardCount gives the shard count for JOB_COMPLETION_INDEX
	// (Kubernetes indexed jobs, where the index comes without a count).
	EnvShardCount = "SPECSIM_SHARD_COUNT"
)

// ShardFromEnv derives the shard from the environment, in order:
//
//  1. Slurm job arrays: i = SLURM_ARRAY_TASK_ID − SLURM_ARRAY_TASK_MIN
//     (MIN taken as 0 when unset), n = SLURM_ARRAY_TASK_COUNT.
//  2. Kubernetes indexed jobs: i = JOB_COMPLETION_INDEX, n =
//     SPECSIM_SHARD_COUNT (required with it).
//
// It returns ok = false when neither is set.
func ShardFromEnv(getenv func(string) string) (s Shard, ok bool, err error) {
	num := func(k string) (int, error) {
		v, err := strconv.Atoi(strings.TrimSpace(getenv(k)))
		if err != nil {
			return 0, fmt.Errorf("%s = %q is not an integer", k, getenv(k))
		}
		return v, nil
	}
	if getenv("SLURM_ARRAY_TASK_ID") != "" {
		id, err := num("SLURM_ARRAY_TASK_ID")
		if err != nil {
			return s, false, err
		}
		if getenv("SLURM_ARRAY_TASK_COUNT") == "" {
			return s, false, fmt.Errorf("SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not (Slurm >= 20.02 sets both); give the shard i/n instead")
		}
		n, err := num("SLURM_ARRAY_TASK_COUNT")
		if err != nil {
			return s, false, err
		}
		lo := 0
		if getenv("SLURM_ARRAY_TASK_MIN") != "" {
			if lo, err = num("SLURM_ARRAY_TASK_MIN"); err != nil {
				return s, false, err
			}
		}
		s = Shard{id - lo, n}
		if err := s.Check(); err != nil {
			return s, false, fmt.Errorf("from SLURM_ARRAY_TASK_ID/COUNT: %w (submit the array as --array=0-%d)", err, n-1)
		}
		return s, true, nil
	}
	if getenv("JOB_COMPLETION_INDEX") != "" {
		id, err := num("JOB_COMPLETION_INDEX")
		if err != nil {
			return s, false, err
		}
		if getenv(EnvShardCount) == "" {
			return s, false, fmt.Errorf("JOB_COMPLETION_INDEX is set but %s is not; set it to the job's completions (or give the shard i/n instead)", EnvShardCount)
		}
		n, err := num(EnvShardCount)
		if err != nil {
			return s, false, err
		}
		s = Shard{id, n}
		if err := s.Check(); err != nil {
			return s, false, fmt.Errorf("from JOB_COMPLETION_INDEX/%s: %w", EnvShardCount, err)
		}
		return s, true, nil
	}
	return All, false, nil
}
