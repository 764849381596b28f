package reprise

import (
	"time"

	"github.com/reprise-bench/reprise/internal/adaptive"
	"github.com/reprise-bench/reprise/replay"
)

// AdaptiveOptions is a single-run adaptive scaling of the closed-loop
// concurrency (AIPerf's --adaptive-scale; docs/design/0032): during the
// run the concurrency rises from Min while every SLA holds over each
// Period, backs off when one fails, and the highest setting that held is
// sustained for Sustain. Max is the ceiling; 0 takes
// Options.Replay.Concurrency. The run needs Options.Replay.Duration and
// writes adaptive_scale_events.jsonl and adaptive_scale_summary.json
// (docs/format/adaptive-scale.md).
type AdaptiveOptions = adaptive.Config

// AdaptiveSummary is what adaptive_scale_summary.json holds: the
// setting found (Boundary), the controller's status and every window.
type AdaptiveSummary = adaptive.Summary

// adaptiveConfig is o.Adaptive with its ceiling resolved.
func adaptiveConfig(o *Options) adaptive.Config {
	c := *o.Adaptive
	if c.Max == 0 {
		c.Max = o.Replay.Concurrency
	}
	return c
}

// startAdaptive makes o.Adaptive's controller, when set, and gives it to
// o.Replay (o is Run's copy of the caller's options).
func startAdaptive(o *Options) *adaptive.Run {
	if o.Adaptive == nil {
		return nil
	}
	c := adaptiveConfig(o)
	ar := adaptive.NewRun(c)
	o.Replay.Adaptive = &replay.Adaptive{Start: c.Min, Period: c.Period, Assess: ar.Assess}
	return ar
}

// checkAdaptive reports o.Adaptive's problems and those of the run it
// needs (a closed loop with a ceiling and a duration).
func checkAdaptive(o *Options, bad func(path, format string, args ...any)) {
	if o.Adaptive == nil {
		return
	}
	c := adaptiveConfig(o)
	if err := c.Validate(); err != nil {
		bad("Adaptive", "{Adaptive}: %w", err)
	}
	if o.Replay.Duration <= 0 {
		bad("Replay.Duration", "{Adaptive} needs {Replay.Duration}: the run's length bounds the search and the sustain")
	}
	if o.Replay.Concurrency < 1 {
		bad("Replay.Concurrency", "{Adaptive} needs {Replay.Concurrency}: the ceiling of the concurrency it moves")
	} else if c.Max > o.Replay.Concurrency {
		bad("Adaptive.Max", "{Adaptive.Max} %d exceeds {Replay.Concurrency} %d, the ceiling", c.Max, o.Replay.Concurrency)
	}
}

// openAdaptive starts the controller's first window and its events file
// in the run directory; records are measured as the run's summary is.
func openAdaptive(ar *adaptive.Run, dir string, rcfg *runConfig) error {
	if ar == nil {
		return nil
	}
	if err := ar.Open(dir, rcfg.Summary, time.Now().UnixNano()); err != nil {
		return err
	}
	rcfg.Observe = ar.Observe
	return nil
}

// closeAdaptive writes the controller's summary; a run that ended first
// leaves it incomplete.
func closeAdaptive(ar *adaptive.Run, interrupted bool) (*adaptive.Summary, error) {
	if ar == nil {
		return nil, nil
	}
	reason := "benchmark_duration_ended"
	if interrupted {
		reason = "interrupted"
	}
	return ar.Close(reason)
}
