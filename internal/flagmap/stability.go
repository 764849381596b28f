package flagmap

import (
	"errors"
	"fmt"
	"time"

	"github.com/reprise-bench/reprise"
	"github.com/reprise-bench/reprise/internal/stability"
	"github.com/reprise-bench/reprise/replay"
)

// ProfileStability maps GenAI-Perf's stability stop onto o.Stability:
// --measurement-interval/-p MS, --stability-percentage/-s PCT and
// perf_analyzer's --max-trials N, GenAI-Perf's defaults for the ones not
// given. It bounds the run, so AIPerf's default request count does not
// apply.
func ProfileStability(v Values, o *reprise.Options, _ *replay.Config) error {
	if !v.IsSet("measurement-interval") && !v.IsSet("stability-percentage") {
		if v.IsSet("max-trials") {
			return errors.New("--max-trials needs --measurement-interval or --stability-percentage")
		}
		return nil
	}
	st := reprise.NewStabilityOptions()
	if v.IsSet("measurement-interval") {
		ms := v.Int("measurement-interval")
		if ms <= 0 {
			return fmt.Errorf("--measurement-interval %d: want milliseconds > 0", ms)
		}
		st.Interval = time.Duration(ms) * time.Millisecond
	}
	if v.IsSet("stability-percentage") {
		if st.Percentage = v.Float("stability-percentage"); st.Percentage <= 0 {
			return fmt.Errorf("--stability-percentage %v: want a percentage > 0", st.Percentage)
		}
	}
	if v.IsSet("max-trials") {
		if st.MaxWindows = v.Int("max-trials"); st.MaxWindows < stability.Windows {
			return fmt.Errorf("--max-trials %d: want ≥ %d, the windows that must agree", st.MaxWindows, stability.Windows)
		}
	}
	o.Stability = &st
	return nil
}
