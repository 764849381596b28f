package otlp

import (
	"encoding/json"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// The OTLP enums this package writes (opentelemetry-proto's
// metrics/v1/metrics.proto).
const (
	temporalityCumulative = 2 // AGGREGATION_TEMPORALITY_CUMULATIVE
)

// Attr is one attribute: a resource's or a data point's.
type Attr struct {
	Key   string
	Value string
}

// Batch says what one request carries besides the metrics.
type Batch struct {
	// Resource are the resource's attributes, in order.
	Resource []Attr
	// Scope and ScopeVersion name the instrumentation scope.
	Scope, ScopeVersion string
	// Start is when the cumulative series began (the run's start); Now
	// the time of every data point.
	Start, Now time.Time
	// Rename, when not nil, maps a data point's label names to the
	// attribute keys they are sent as (a label not in it keeps its name).
	Rename map[string]string
}

// Encode returns the OTLP/HTTP JSON body of an
// ExportMetricsServiceRequest holding fams as b describes. A family of a
// type OTLP has no mapping for is sent as a gauge of its untyped value;
// a non-finite value (NaN, ±Inf) is left out, JSON having no spelling
// for it. fams is not modified.
func Encode(fams []*dto.MetricFamily, b Batch) ([]byte, error) {
	start, now := nanos(b.Start), nanos(b.Now)
	ms := make([]jsonMetric, 0, len(fams))
	for _, f := range fams {
		m := jsonMetric{Name: f.GetName(), Description: f.GetHelp(), Unit: unitOf(f.GetName())}
		switch f.GetType() {
		case dto.MetricType_COUNTER:
			m.Sum = &jsonSum{Temporality: temporalityCumulative, Monotonic: true}
			for _, p := range f.GetMetric() {
				if v := p.GetCounter().GetValue(); finite(v) {
					m.Sum.Points = append(m.Sum.Points, numberPoint(p, b.Rename, start, now, v))
				}
			}
		case dto.MetricType_HISTOGRAM:
			m.Histogram = &jsonHistogram{Temporality: temporalityCumulative}
			for _, p := range f.GetMetric() {
				if hp, ok := histogramPoint(p, b.Rename, start, now); ok {
					m.Histogram.Points = append(m.Histogram.Points, hp)
				}
			}
		case dto.MetricType_SUMMARY:
			m.Summary = &jsonSummary{}
			for _, p := range f.GetMetric() {
				if sp, ok := summaryPoint(p, b.Rename, start, now); ok {
					m.Summary.Points = append(m.Summary.Points, sp)
				}
			}
		default: // gauges, untyped
			m.Gauge = &jsonGauge{}
			for _, p := range f.GetMetric() {
				v := p.GetGauge().GetValue()
				if p.GetUntyped() != nil {
					v = p.GetUntyped().GetValue()
				}
				if finite(v) {
					m.Gauge.Points = append(m.Gauge.Points, numberPoint(p, b.Rename, start, now, v))
				}
			}
		}
		ms = append(ms, m)
	}
	req := jsonRequest{ResourceMetrics: []jsonResourceMetrics{{
		Resource:     jsonResource{Attributes: attrs(b.Resource)},
		ScopeMetrics: []jsonScopeMetrics{{Scope: jsonScope{Name: b.Scope, Version: b.ScopeVersion}, Metrics: ms}},
	}}}
	return json.Marshal(req)
}

// unitOf is the UCUM unit a Prometheus name's suffix says, as the
// OpenTelemetry Prometheus compatibility specification maps them back.
func unitOf(name string) string {
	name = strings.TrimSuffix(name, "_total")
	switch {
	case strings.HasSuffix(name, "_seconds"):
		return "s"
	case strings.HasSuffix(name, "_bytes"):
		return "By"
	case strings.HasSuffix(name, "_tokens"):
		return "{token}"
	}
	return ""
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func nanos(t time.Time) string {
	if t.IsZero() {
		return "0"
	}
	return strconv.FormatInt(t.UnixNano(), 10)
}

func pointAttrs(p *dto.Metric, rename map[string]string) []jsonKeyValue {
	ls := p.GetLabel()
	out := make([]jsonKeyValue, 0, len(ls))
	for _, l := range ls {
		k := l.GetName()
		if r, ok := rename[k]; ok {
			k = r
		}
		out = append(out, jsonKeyValue{Key: k, Value: jsonAnyValue{StringValue: l.GetValue()}})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

func numberPoint(p *dto.Metric, rename map[string]string, start, now string, v float64) jsonNumberPoint {
	return jsonNumberPoint{Attributes: pointAttrs(p, rename), Start: start, Time: now, AsDouble: v}
}

// histogramPoint turns Prometheus's cumulative buckets (each counting
// the observations ≤ its upper bound) into OTLP's: explicit bounds
// without +Inf, and len(bounds)+1 counts of the observations in
// (bounds[i-1], bounds[i]], the last one above every bound.
func histogramPoint(p *dto.Metric, rename map[string]string, start, now string) (jsonHistogramPoint, bool) {
	h := p.GetHistogram()
	if !finite(h.GetSampleSum()) {
		return jsonHistogramPoint{}, false
	}
	total := h.GetSampleCount()
	hp := jsonHistogramPoint{Attributes: pointAttrs(p, rename), Start: start, Time: now,
		Count: strconv.FormatUint(total, 10), Sum: h.GetSampleSum(), Bounds: []float64{}}
	var below uint64
	for _, bk := range h.GetBucket() {
		ub := bk.GetUpperBound()
		if math.IsInf(ub, +1) {
			continue
		}
		c := bk.GetCumulativeCount()
		hp.Bounds = append(hp.Bounds, ub)
		hp.Counts = append(hp.Counts, strconv.FormatUint(c-min(c, below), 10))
		below = max(below, c)
	}
	hp.Counts = append(hp.Counts, strconv.FormatUint(total-min(total, below), 10))
	return hp, true
}

func summaryPoint(p *dto.Metric, rename map[string]string, start, now string) (jsonSummaryPoint, bool) {
	s := p.GetSummary()
	if !finite(s.GetSampleSum()) {
		return jsonSummaryPoint{}, false
	}
	sp := jsonSummaryPoint{Attributes: pointAttrs(p, rename), Start: start, Time: now,
		Count: strconv.FormatUint(s.GetSampleCount(), 10), Sum: s.GetSampleSum()}
	for _, q := range s.GetQuantile() {
		if finite(q.GetValue()) {
			sp.Quantiles = append(sp.Quantiles, jsonQuantile{Quantile: q.GetQuantile(), Value: q.GetValue()})
		}
	}
	return sp, true
}

func attrs(as []Attr) []jsonKeyValue {
	out := make([]jsonKeyValue, 0, len(as))
	for _, a := range as {
		out = append(out, jsonKeyValue{Key: a.Key, Value: jsonAnyValue{StringValue: a.Value}})
	}
	return out
}
