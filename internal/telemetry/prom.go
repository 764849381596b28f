package telemetry

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/reprise-bench/reprise/engine/record"
)

// ParsePage parses one Prometheus text-format page (format 0.0.4, the one
// vLLM, SGLang, llama.cpp, Dynamo and the DCGM exporter serve) and appends
// one sample per value to dst, stamped with timeNS and target. Histograms
// and summaries are expanded into their buckets or quantiles plus _sum and
// _count. Families are emitted in name order and series in label order, so
// the output is deterministic.
func ParsePage(r io.Reader, target string, timeNS int64, dst []record.MetricSample) ([]record.MetricSample, error) {
	// The zero TextParser panics (validation scheme unset); see docs/reference/platform.md §6.
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(r)
	if err != nil {
		return dst, fmt.Errorf("parse metrics page: %w", err)
	}
	names := make([]string, 0, len(families))
	for name := range families {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		dst = appendFamily(dst, families[name], target, timeNS)
	}
	return dst, nil
}

func appendFamily(dst []record.MetricSample, mf *dto.MetricFamily, target string, timeNS int64) []record.MetricSample {
	name := mf.GetName()
	typ := typeName(mf.GetType())
	metrics := slices.Clone(mf.GetMetric())
	labelsOf := make(map[*dto.Metric]string, len(metrics))
	for _, m := range metrics {
		labelsOf[m] = canonicalLabels(m.GetLabel())
	}
	slices.SortStableFunc(metrics, func(a, b *dto.Metric) int { return strings.Compare(labelsOf[a], labelsOf[b]) })
	base := record.MetricSample{TimeNS: timeNS, Target: target, Metric: name, Type: typ, Bound: math.NaN()}
	for _, m := range metrics {
		s := base
		s.Labels = labelsOf[m]
		switch mf.GetType() {
		case dto.MetricType_COUNTER:
			s.Value = m.GetCounter().GetValue()
			dst = append(dst, s)
		case dto.MetricType_GAUGE:
			s.Value = m.GetGauge().GetValue()
			dst = append(dst, s)
		case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
			h := m.GetHistogram()
			infSeen := false
			for _, b := range h.GetBucket() {
				bs := s
				bs.Part, bs.Bound, bs.Value = "bucket", b.GetUpperBound(), float64(b.GetCumulativeCount())
				if b.GetCumulativeCountFloat() > 0 {
					bs.Value = b.GetCumulativeCountFloat()
				}
				infSeen = infSeen || math.IsInf(bs.Bound, 1)
				dst = append(dst, bs)
			}
			count := float64(h.GetSampleCount())
			if h.GetSampleCountFloat() > 0 {
				count = h.GetSampleCountFloat()
			}
			if !infSeen {
				// The text parser drops the +Inf bucket into the count; restore it
				// so bucket arithmetic works on every page.
				bs := s
				bs.Part, bs.Bound, bs.Value = "bucket", math.Inf(1), count
				dst = append(dst, bs)
			}
			ss, cs := s, s
			ss.Part, ss.Value = "sum", h.GetSampleSum()
			cs.Part, cs.Value = "count", count
			dst = append(dst, ss, cs)
		case dto.MetricType_SUMMARY:
			sm := m.GetSummary()
			for _, q := range sm.GetQuantile() {
				qs := s
				qs.Part, qs.Bound, qs.Value = "quantile", q.GetQuantile(), q.GetValue()
				dst = append(dst, qs)
			}
			ss, cs := s, s
			ss.Part, ss.Value = "sum", sm.GetSampleSum()
			cs.Part, cs.Value = "count", float64(sm.GetSampleCount())
			dst = append(dst, ss, cs)
		default:
			s.Value = m.GetUntyped().GetValue()
			dst = append(dst, s)
		}
	}
	return dst
}

func typeName(t dto.MetricType) string {
	switch t {
	case dto.MetricType_COUNTER:
		return "counter"
	case dto.MetricType_GAUGE:
		return "gauge"
	case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
		return "histogram"
	case dto.MetricType_SUMMARY:
		return "summary"
	default:
		return "untyped"
	}
}

// canonicalLabels renders a label set as `a="x",b="y"` sorted by name.
func canonicalLabels(pairs []*dto.LabelPair) string {
	if len(pairs) == 0 {
		return ""
	}
	ps := slices.Clone(pairs)
	slices.SortFunc(ps, func(a, b *dto.LabelPair) int { return strings.Compare(a.GetName(), b.GetName()) })
	var sb strings.Builder
	for i, p := range ps {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(p.GetName())
		sb.WriteString(`="`)
		sb.WriteString(escapeLabel(p.GetValue()))
		sb.WriteByte('"')
	}
	return sb.String()
}

var labelEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)

func escapeLabel(v string) string { return labelEscaper.Replace(v) }

// LabelValue returns the value of label name in a canonical label string,
// or "" when absent.
func LabelValue(labels, name string) string {
	for rest := labels; rest != ""; {
		eq := strings.Index(rest, `="`)
		if eq < 0 {
			return ""
		}
		key := rest[:eq]
		rest = rest[eq+2:]
		var val strings.Builder
		i := 0
		for ; i < len(rest); i++ {
			c := rest[i]
			if c == '\\' && i+1 < len(rest) {
				i++
				switch rest[i] {
				case 'n':
					val.WriteByte('\n')
				default:
					val.WriteByte(rest[i])
				}
				continue
			}
			if c == '"' {
				break
			}
			val.WriteByte(c)
		}
		if key == name {
			return val.String()
		}
		rest = rest[min(i+1, len(rest)):]
		rest = strings.TrimPrefix(rest, ",")
	}
	return ""
}
