package compare

import (
	"fmt"
	"path/filepath"
	"strings"
)

// LoadRepeated reads the repeated runs of one load (replay --runs N, a
// sweep point with --runs: the run directories dirs of the directory
// dir, as arrowio.RepeatedRuns lists them) as one side: their measured
// requests pooled, each run's sends shifted to start where the previous
// run ended, so that the side's benchmark duration is the sum of the
// runs' and its throughputs the pooled counts over that sum. A pooled
// side is resampled request by request, never paired by trace row (each
// row is in every run), and its interval holds the spread of requests
// within the runs, not the variation from one run to the next; a
// warning says so. [Run.Replicates] keeps the runs, one Run each, for
// a comparison that resamples runs. Each run's measurement notes are
// kept, prefixed with its directory.
func LoadRepeated(dir string, dirs []string) (*Run, error) {
	if len(dirs) == 0 {
		return nil, fmt.Errorf("%s: no run", dir)
	}
	pooled := &Run{Label: dir, Dir: dir, Target: -1}
	var last int64 // the previous run's last end, after its shift
	for i, d := range dirs {
		r, err := Load(d)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			pooled.TraceSHA256, pooled.Model, pooled.Host, pooled.Goodput = r.TraceSHA256, r.Model, r.Host, r.Goodput
			pooled.Targets, pooled.FanOut = r.Targets, r.FanOut
		} else {
			if r.TraceSHA256 != pooled.TraceSHA256 {
				pooled.notes = append(pooled.notes, fmt.Sprintf("%s replayed trace_sha256 %q, %s %q", filepath.Base(d), short(r.TraceSHA256), filepath.Base(dirs[0]), short(pooled.TraceSHA256)))
			}
			pooled.Goodput = pooled.Goodput && r.Goodput
		}
		pooled.Warmup += r.Warmup
		for _, q := range r.quality {
			pooled.quality = append(pooled.quality, filepath.Base(d)+": "+q)
		}
		var first, end int64
		for j := range r.reqs {
			if q := &r.reqs[j]; q.sent != 0 {
				if first == 0 || q.sent < first {
					first = q.sent
				}
				end = max(end, q.end)
			}
		}
		shift := int64(0)
		if last != 0 && first != 0 {
			shift = last - first
		}
		for _, q := range r.reqs {
			if q.sent != 0 {
				q.sent += shift
				q.end += shift
			}
			pooled.reqs = append(pooled.reqs, q)
		}
		if end != 0 {
			last = end + shift
		}
		pooled.replicates = append(pooled.replicates, r)
	}
	names := make([]string, len(dirs))
	for i, d := range dirs {
		names[i] = filepath.Base(d)
	}
	pooled.notes = append(pooled.notes, fmt.Sprintf("%d repeated runs (%s) pooled: their requests are resampled together, so the interval holds the spread of requests within runs, not the variation between runs",
		len(dirs), strings.Join(names, ", ")))
	return pooled, nil
}

// Replicates returns the runs a side pooled ([LoadRepeated]), in run
// order, or nil for a side of one run. The caller must not change them.
func (r *Run) Replicates() []*Run { return r.replicates }
