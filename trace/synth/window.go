package synth

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Window is a half-open interval [Start, End) of trace time (before any
// speed-up). HasEnd false means "to the end of the trace". The zero value
// is the whole trace.
type Window struct {
	Start  time.Duration
	End    time.Duration
	HasEnd bool
}

// IsZero reports whether w is the whole trace.
func (w Window) IsZero() bool { return w.Start == 0 && !w.HasEnd }

// Contains reports whether t lies in [Start, End).
func (w Window) Contains(t time.Duration) bool {
	return t >= w.Start && (!w.HasEnd || t < w.End)
}

// String formats w the way ParseWindow reads it.
func (w Window) String() string {
	s := w.Start.String() + ":"
	if w.HasEnd {
		s += w.End.String()
	}
	return s
}

// ParseWindow parses "START:END" where each bound is a Go duration
// ("90s", "1h30m", "250ms") or a plain number of seconds ("600", "0.5"),
// and either may be empty: "10m:" is from 10 minutes to the end, ":5m" the
// first five minutes. END must be after START.
func ParseWindow(s string) (Window, error) {
	start, end, ok := strings.Cut(s, ":")
	if !ok {
		return Window{}, fmt.Errorf("window %q: want START:END (durations like 10m or seconds like 600; either may be empty)", s)
	}
	var w Window
	var errs []error
	if strings.TrimSpace(start) != "" {
		d, err := parseBound(start)
		if err != nil {
			errs = append(errs, fmt.Errorf("window start: %w", err))
		}
		w.Start = d
	}
	if strings.TrimSpace(end) != "" {
		d, err := parseBound(end)
		if err != nil {
			errs = append(errs, fmt.Errorf("window end: %w", err))
		}
		w.End, w.HasEnd = d, true
	}
	if err := errors.Join(errs...); err != nil {
		return Window{}, err
	}
	if w.HasEnd && w.End <= w.Start {
		return Window{}, fmt.Errorf("window %q: the end %v is not after the start %v", s, w.End, w.Start)
	}
	return w, nil
}

// maxBound is the largest window bound, about 292 years in ns.
const maxBound = math.MaxInt64

func parseBound(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		if !(v >= 0) || v*1e9 >= maxBound {
			return 0, fmt.Errorf("%q: want a number of seconds ≥ 0", s)
		}
		return time.Duration(math.Round(v * 1e9)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q: want a duration like 10m or 1h30m, or a number of seconds", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("%q: a window bound cannot be negative", s)
	}
	return d, nil
}
