// Package stattest provides goodness-of-fit testing for categorical data:
// Pearson chi-squared tests with p-values from the chi-squared
// distribution (asymptotic in the counts; the tail itself is computed to
// full precision, not a normal approximation), pooling of sparse cells, pooled tests over independent groups, Holm's multiple-testing
// correction, power and minimum-detectable-effect calculations via the
// noncentral chi-squared distribution, and confidence intervals for Monte
// Carlo estimates.
//
// The package knows nothing about where the counts and probabilities come
// from. Programmer errors, such as slices of mismatched length or parameters
// outside their domain, cause a panic with a message starting "stattest: ";
// problems with the data, such as probabilities that do not sum to one, are
// returned as errors. Statistical caveats that do not invalidate a result,
// such as a test with no degrees of freedom, are reported in
// Result.Warnings.
package stattest // import "github.com/specsim/specsim/sim/stattest"
