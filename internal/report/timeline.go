// The time axis every time chart shares.

package report

import (
	"strconv"
	"strings"
)

// timeline is the time axis every time chart shares: seconds since each
// run's start, in buckets.
type timeline struct {
	b     buckets
	shade []Span
}

func newTimeline(runs []*runData) timeline {
	span := 0.0
	var shade []Span
	for _, d := range runs {
		span = max(span, d.span())
		if w, ok := d.warmup(); ok {
			shade = append(shade, w)
		}
	}
	return timeline{b: newBuckets(span), shade: shade}
}

func (tl timeline) chart(id, title, explain, ylabel string) Chart {
	w := "1 s"
	if tl.b.width != 1 {
		w = strconv.FormatFloat(tl.b.width, 'g', -1, 64) + " s"
	}
	return Chart{ID: id, Title: title, Explain: strings.ReplaceAll(explain, "{bucket}", w), Kind: Steps, TimeAxis: true,
		XAxis: Axis{Label: "time since start (s)"}, YAxis: Axis{Label: ylabel}, X: tl.b.starts(), Shade: tl.shade}
}

// perBucket turns sums into rates per second.
func (tl timeline) perSecond(sums []float64) Values {
	out := make(Values, len(sums))
	for i, v := range sums {
		out[i] = v / tl.b.width
	}
	return out
}
