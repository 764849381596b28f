package summary

import (
	"fmt"
	"strings"
	"time"
)

// The measurement-quality verdicts (summary.json's
// measurement_quality.verdict).
const (
	QualityGood     = "good"
	QualityDegraded = "degraded"
)

// Quality is summary.json's measurement_quality: whether the client kept
// up with the run well enough for its timestamps to be trusted, judged
// from the run's own evidence (and from a calibration of the machine, when
// the run had one). It is a pure function of the summary's statistics and
// options, so `reprise summarize` recomputes it exactly.
type Quality struct {
	// Verdict is [QualityGood] or [QualityDegraded].
	Verdict string `json:"verdict"`
	// Reasons say why a degraded run is degraded, one sentence each with
	// its numbers; empty for a good one.
	Reasons []string `json:"reasons"`
	// Evidence holds the numbers the verdict was judged on.
	Evidence QualityEvidence `json:"evidence"`
}

// QualityEvidence are the numbers behind a [Quality] verdict. A pointer
// field is nil (absent from JSON) when the run has no such metric.
type QualityEvidence struct {
	// ReadLagP90MS is client_read_lag's p90 and ITLP50MS
	// inter_token_latency's p50: a read that waited longer than the gap
	// between two tokens stamps both at the later one's arrival.
	ReadLagP90MS *float64 `json:"client_read_lag_p90_ms,omitempty"`
	ITLP50MS     *float64 `json:"inter_token_latency_p50_ms,omitempty"`
	// LatenessP99MS is schedule_lateness's p99 and LatenessBudgetMS the
	// budget it is judged against (the run's late threshold).
	LatenessP99MS    *float64 `json:"schedule_lateness_p99_ms,omitempty"`
	LatenessBudgetMS float64  `json:"lateness_budget_ms"`
	// EventsPerReadP50 is events_per_read_max's p50: how many events the
	// median request saw completed by one read.
	EventsPerReadP50 *float64 `json:"events_per_read_max_p50,omitempty"`
	// Load is the load the run put on the client.
	Load Load `json:"load"`
	// SafeLoad is the calibrated safe load, with a calibration.
	SafeLoad *Load `json:"safe_load,omitempty"`
}

// LoadOf returns the load s put on the client.
func LoadOf(s *Summary) Load { return s.Load }

// load computes Summary.Load from the accumulated sends: n sent, the
// first and last send (Unix ns).
func (s *Summary) load(n int, firstSent, lastSent int64) Load {
	var w float64 // mean request latency, s
	if e := s.Metrics["request_latency"]; e != nil {
		w = e.Avg / 1e3
	}
	span := float64(lastSent-firstSent)/1e9 + w
	if n == 0 || span <= 0 {
		return Load{}
	}
	l := Load{RequestsPerSec: float64(n) / span}
	l.Streams = l.RequestsPerSec * w
	if s.Options.Streaming && s.RequestCount > 0 {
		l.EventsPerSec = l.RequestsPerSec * float64(s.TotalOSL) / float64(s.RequestCount)
	}
	return l
}

// SafeLoadMargin is how far past a calibrated safe load a run may go
// (in every measure) before it counts as past it: run-to-run noise of the
// load itself.
const SafeLoadMargin = 1.1

// Past returns the measures in which l is past safe (beyond
// [SafeLoadMargin]), described with their numbers; nil when none.
func (l Load) Past(safe Load) []string {
	var out []string
	for _, m := range []struct {
		name      string
		got, safe float64
	}{{"streams", l.Streams, safe.Streams}, {"events/s", l.EventsPerSec, safe.EventsPerSec},
		{"requests/s", l.RequestsPerSec, safe.RequestsPerSec}} {
		if m.safe > 0 && m.got > m.safe*SafeLoadMargin {
			out = append(out, fmt.Sprintf("%.4g %s > %.4g", m.got, m.name, m.safe))
		}
	}
	return out
}

// Quality judges the summary's measurement quality (see [Quality]):
//   - read lag: in over 10 % of the requests a read waited in the socket
//     longer than the median gap between tokens (client_read_lag p90 >
//     inter_token_latency p50), so tokens that waited together were stamped
//     together;
//   - lateness: schedule_lateness p99 over the late threshold;
//   - coalescing without read lag: without kernel receive times (no
//     client_read_lag) the median request had reads completing two or more
//     events, which the client cannot tell from its own lag;
//   - a calibration's safe load: the run's [Load] is past it;
//   - nothing measured: no request succeeded.
func (s *Summary) Quality() Quality {
	q := Quality{Reasons: []string{}}
	ev := &q.Evidence
	ev.LatenessBudgetMS = float64(s.Options.LateThreshold) / 1e6
	if s.Options.LateThreshold == 0 {
		ev.LatenessBudgetMS = 1
	}
	ev.Load = LoadOf(s)
	p := func(tag string, get func(*Stats) float64) *float64 {
		if st := s.Metrics[tag]; st != nil {
			v := get(st)
			return &v
		}
		return nil
	}
	ev.ReadLagP90MS = p("client_read_lag", func(st *Stats) float64 { return st.P90 })
	ev.ITLP50MS = p("inter_token_latency", func(st *Stats) float64 { return st.P50 })
	ev.LatenessP99MS = p("schedule_lateness", func(st *Stats) float64 { return st.P99 })
	ev.EventsPerReadP50 = p("events_per_read_max", func(st *Stats) float64 { return st.P50 })
	if s.RequestCount == 0 {
		q.Reasons = append(q.Reasons, "no request succeeded: nothing was measured")
	}
	if ev.ReadLagP90MS != nil && ev.ITLP50MS != nil && *ev.ITLP50MS > 0 && *ev.ReadLagP90MS > *ev.ITLP50MS {
		q.Reasons = append(q.Reasons, fmt.Sprintf("client read lag p90 %s ms > median inter-token latency %s ms: "+
			"the client fell behind the streams and stamped tokens that waited together at the later one's arrival",
			Num(*ev.ReadLagP90MS, 3), Num(*ev.ITLP50MS, 3)))
	}
	if ev.LatenessP99MS != nil && *ev.LatenessP99MS > ev.LatenessBudgetMS {
		q.Reasons = append(q.Reasons, fmt.Sprintf("schedule lateness p99 %s ms > %s ms: requests left later than the schedule said",
			Num(*ev.LatenessP99MS, 3), Num(ev.LatenessBudgetMS, 3)))
	}
	if ev.ReadLagP90MS == nil && ev.EventsPerReadP50 != nil && *ev.EventsPerReadP50 >= 2 {
		q.Reasons = append(q.Reasons, fmt.Sprintf("the median request had reads completing %s events, and without kernel receive times "+
			"the client cannot tell whether it fell behind", Num(*ev.EventsPerReadP50, 3)))
	}
	if c := s.Options.Calibration; c != nil {
		safe := c.SafeLoad
		ev.SafeLoad = &safe
		if past := ev.Load.Past(safe); len(past) > 0 {
			q.Reasons = append(q.Reasons, fmt.Sprintf("past the calibrated safe load (%s; calibration %s of %s): "+
				"timing errors may exceed the calibrated %s ms", strings.Join(past, ", "), c.File, c.Created.Format(time.DateOnly), Num(c.MaxErrorMS, 3)))
		}
	}
	q.Verdict = QualityGood
	if len(q.Reasons) > 0 {
		q.Verdict = QualityDegraded
	}
	return q
}
