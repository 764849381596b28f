package summary

import (
	"slices"
	"time"

	"github.com/reprise-bench/reprise/engine/record"
)

// Slicer sorts requests into time slices of a fixed width and summarizes
// each. Feed it every record with [Slicer.Add] after [Slicer.Start] has
// seen them all (two passes: the first finds the start). Not safe for
// concurrent use; the zero value is not usable (use [NewSlicer]).
type Slicer struct {
	width time.Duration
	opts  Options
	start int64
	accs  map[int]*Accumulator
}

// NewSlicer returns a Slicer of slices width wide (> 0), summarizing
// with opts.
func NewSlicer(width time.Duration, opts Options) *Slicer {
	if width <= 0 {
		panic("BUG: summary.NewSlicer: width must be > 0")
	}
	return &Slicer{width: width, opts: opts, start: -1, accs: map[int]*Accumulator{}}
}

// Start is the first pass: it notes the earliest send of a measured
// request.
func (s *Slicer) Start(r *record.Request) {
	if r.Phase == record.PhaseProfile && r.SentNS > 0 && (s.start < 0 || r.SentNS < s.start) {
		s.start = r.SentNS
	}
}

// Add is the second pass: a measured request goes to the slice its send
// falls in (a request never sent, SentNS 0, to the first).
func (s *Slicer) Add(r *record.Request) {
	if r.Phase != record.PhaseProfile || s.start < 0 {
		return
	}
	i := 0
	if r.SentNS > s.start {
		i = int((r.SentNS - s.start) / int64(s.width))
	}
	acc := s.accs[i]
	if acc == nil {
		acc = NewAccumulator(s.opts)
		s.accs[i] = acc
	}
	acc.Add(r)
}

// Slices returns the slices that hold a request, in time order, each
// summarized with info.
func (s *Slicer) Slices(info RunInfo) []TimeSlice {
	var idx []int
	for i := range s.accs {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	out := make([]TimeSlice, 0, len(idx))
	for _, i := range idx {
		lo := s.start + int64(i)*int64(s.width)
		out = append(out, TimeSlice{Index: i, StartNS: lo, EndNS: lo + int64(s.width), Summary: s.accs[i].Summary(info)})
	}
	return out
}
