package flagmap

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/reprise-bench/reprise"
	"github.com/reprise-bench/reprise/internal/adaptive"
	isearch "github.com/reprise-bench/reprise/internal/search"
	"github.com/reprise-bench/reprise/replay"
)

// adaptiveFlags are the flags that only --adaptive-scale takes.
var adaptiveFlags = []string{"adaptive-sustain-duration", "adaptive-assessment-period", "adaptive-scale-sla", "adaptive-scale-control"}

// ProfileAdaptive maps AIPerf's single-run adaptive scaling onto
// o.Adaptive: --adaptive-scale, --adaptive-sustain-duration S,
// --adaptive-assessment-period S (≥ 1, default 30), repeated
// --adaptive-scale-sla METRIC:STAT:OP:THRESHOLD, and
// --adaptive-scale-control concurrency:MIN,MAX[:int] (default 1 up to
// --concurrency). The run's checks (a duration, a ceiling) are the
// library's.
func ProfileAdaptive(v Values, o *reprise.Options, _ *replay.Config) error {
	if !v.Bool("adaptive-scale") {
		for _, f := range adaptiveFlags {
			if v.IsSet(f) {
				return fmt.Errorf("--%s needs --adaptive-scale", f)
			}
		}
		return nil
	}
	var errs []error
	if !v.IsSet("benchmark-duration") {
		errs = append(errs, errors.New("--adaptive-scale needs --benchmark-duration S: the run's length bounds the search and the sustain"))
	}
	a := reprise.NewAdaptiveOptions()
	if !v.IsSet("adaptive-sustain-duration") {
		errs = append(errs, errors.New("--adaptive-scale needs --adaptive-sustain-duration S: how long to hold the setting found"))
	} else if a.Sustain = Seconds(&errs, "adaptive-sustain-duration", v.Float("adaptive-sustain-duration")); a.Sustain <= 0 {
		errs = append(errs, fmt.Errorf("--adaptive-sustain-duration %v: want seconds > 0", v.Float("adaptive-sustain-duration")))
	}
	if v.IsSet("adaptive-assessment-period") {
		s := v.Float("adaptive-assessment-period")
		if a.Period = Seconds(&errs, "adaptive-assessment-period", s); a.Period < adaptive.MinPeriod {
			errs = append(errs, fmt.Errorf("--adaptive-assessment-period %v: want seconds ≥ 1 (as in AIPerf)", s))
		}
	}
	slas := v.StringSlice("adaptive-scale-sla")
	if len(slas) == 0 {
		errs = append(errs, errors.New("--adaptive-scale needs --adaptive-scale-sla METRIC:STAT:OP:THRESHOLD (e.g. request_latency:p95:le:30000); repeatable"))
	}
	for _, s := range slas {
		if _, err := isearch.ParseConstraint(s); err != nil {
			errs = append(errs, fmt.Errorf("--adaptive-scale-sla %w", err))
			continue
		}
		a.SLAs = append(a.SLAs, s)
	}
	if c := v.String("adaptive-scale-control"); c != "" {
		if err := parseControl(c, &a); err != nil {
			errs = append(errs, fmt.Errorf("--adaptive-scale-control %q: %w", c, err))
		}
	}
	o.Adaptive = &a
	return errors.Join(errs...)
}

// parseControl reads AIPerf's compact control VARIABLE:MIN,MAX:TYPE;
// only concurrency (int) is a control variable here.
func parseControl(s string, a *reprise.AdaptiveOptions) error {
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return errors.New("want VARIABLE:MIN,MAX[:TYPE], e.g. concurrency:1,64:int")
	}
	if parts[0] != adaptive.VariableConcurrency {
		return fmt.Errorf("control variable %q: only concurrency is supported (prefill_concurrency, request_rate and users are not)", parts[0])
	}
	if len(parts) == 3 && parts[2] != "int" {
		return fmt.Errorf("type %q: concurrency is an int", parts[2])
	}
	lo, hi, ok := strings.Cut(parts[1], ",")
	mn, err1 := strconv.Atoi(strings.TrimSpace(lo))
	mx, err2 := strconv.Atoi(strings.TrimSpace(hi))
	if !ok || err1 != nil || err2 != nil || mn < 1 || mx < mn {
		return fmt.Errorf("range %q: want whole numbers MIN,MAX with 1 ≤ MIN ≤ MAX", parts[1])
	}
	a.Min, a.Max = mn, mx
	return nil
}
