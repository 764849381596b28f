// Package search chooses where to probe a server next: the sampling
// designs of a sweep ([Sobol], [LatinHypercube]), a boundary search that
// uses the monotone response of latency to load ([Boundary], beside the
// plain [Bisect] it is measured against), and a model-based search over a
// box of settings ([Optimize]: a Gaussian-process surrogate with
// constrained expected improvement, several objectives giving a Pareto
// front).
//
// The package knows nothing of runs: a probe is a [ProbeFunc] that
// measures one setting and returns its metrics, so every search is tested
// against known functions and a simulated server, and the sweep package
// gives it real runs. Probes are the expensive part (minutes of a GPU
// each), so every search here is judged by how few it needs; the numbers
// are in docs/design/0026-sweeps-and-searches.md.
//
// # Monotonicity
//
// A server's latency does not fall as its load rises (more requests in
// flight share the same batch slots). [Boundary] uses that: instead of
// halving the bracket of the largest load meeting an SLA, it interpolates
// the measured latencies (log against log) to the load where they cross
// the threshold and probes just either side of it, so two probes usually
// close the bracket where bisection needs one per halving. Measurements
// that break the order (a higher load with a clearly lower latency, or a
// pass above a fail) are reported as violations and both loads are
// probed again instead of trusting either.
package search
