// Package casestudy checks public speculative-decoding samplers, each at a
// commit with a known bug and at the commit that fixed it, through the
// external protocol (simulate check --external).
//
// The package holds no Go code beyond its tests. manifest.json names the
// samplers (repository, commits, file, function, licence, public thread);
// wrappers/ adapt each upstream function, run unchanged from the fetched
// file, to specsim_ext; run.py fetches each file at its commits (from
// SPECSIM_CASESTUDY_MIRROR, else from GitHub with git, else skipping with
// a message) and writes results/results.json and results/results.csv. The
// tests check the manifest's properties and, where a mirror and NumPy are
// present, rerun one entry. docs/external.md ("Case study") says how to
// rerun it; paper/casestudy.tex reports the results.
package casestudy
