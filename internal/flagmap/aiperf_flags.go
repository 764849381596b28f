package flagmap

import (
	"errors"
	"fmt"

	"github.com/reprise-bench/reprise"
	"github.com/reprise-bench/reprise/replay"
)

// ProfileRunFlags maps AIPerf's flags that watch and report a run onto o:
// --failed-request-threshold (abort once more than that fraction of the
// measured requests failed), --stats-interval (how often the progress
// line is printed) and GenAI-Perf's --output-tokens-mean-deterministic
// (min_tokens = max_tokens, with ignore_eos).
func ProfileRunFlags(v Values, o *reprise.Options, _ *replay.Config) error {
	var errs []error
	if v.IsSet("failed-request-threshold") {
		t := v.Float("failed-request-threshold")
		if !(t >= 0 && t <= 1) {
			errs = append(errs, fmt.Errorf("--failed-request-threshold %v: want a fraction from 0 to 1 (0.1 aborts once more than 10 %% of the requests failed)", t))
		}
		o.FailedRequestThreshold = &t
	}
	if v.IsSet("stats-interval") {
		s := v.Float("stats-interval")
		if o.ProgressInterval = Seconds(&errs, "stats-interval", s); o.ProgressInterval <= 0 && s <= MaxSeconds {
			errs = append(errs, fmt.Errorf("--stats-interval %v: want seconds > 0", v.Float("stats-interval")))
		}
	}
	if v.Bool("output-tokens-mean-deterministic") {
		o.MinTokens, o.IgnoreEOS = true, true
	}
	return errors.Join(errs...)
}
