package otlp

import (
	"maps"
	"math"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"google.golang.org/protobuf/proto"
)

// FuzzParseKeyValues round-trips k=v lists: every pair parsed, written
// back (percent-encoding what the syntax needs), parses to the same map.
func FuzzParseKeyValues(f *testing.F) {
	f.Add("a=b,c=d")
	f.Add(" team = perf , deployment.environment=ci,novalue,=x,")
	f.Add("k=%2C%3D,e=")
	f.Fuzz(func(t *testing.T, s string) {
		kv, _ := ParseKeyValues(s)
		var parts []string
		keys := make([]string, 0, len(kv))
		for k := range kv {
			if k == "" {
				t.Fatalf("empty key from %q", s)
			}
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			parts = append(parts, escape(k)+"="+escape(kv[k]))
		}
		again, bad := ParseKeyValues(strings.Join(parts, ","))
		if len(bad) > 0 || !maps.Equal(kv, again) {
			t.Fatalf("%q: %v, written back and read %v (bad %q)", s, kv, again, bad)
		}
	})
}

// escape percent-encodes what ParseKeyValues would otherwise split,
// trim or decode.
func escape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == ',' || c == '=' || c == '%' || c <= ' ' || c >= 0x7f {
			b.WriteString("%" + strings.ToUpper(string("0123456789abcdef"[c>>4])+string("0123456789abcdef"[c&15])))
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// FuzzEncode encodes families of arbitrary values and labels: the body
// always decodes with the collector's unmarshaler, with every finite
// value kept.
func FuzzEncode(f *testing.F) {
	f.Add("model", "m", 1.5, 3.0, uint64(4), uint64(2))
	f.Add("", "\x00\"", math.NaN(), math.Inf(1), uint64(0), uint64(9))
	f.Fuzz(func(t *testing.T, label, value string, counter, bound float64, total, below uint64) {
		l := []*dto.LabelPair{{Name: proto.String(label), Value: proto.String(value)}}
		fams := []*dto.MetricFamily{
			{Name: proto.String("c_total"), Type: dto.MetricType_COUNTER.Enum(),
				Metric: []*dto.Metric{{Label: l, Counter: &dto.Counter{Value: proto.Float64(counter)}}}},
			{Name: proto.String("h_seconds"), Type: dto.MetricType_HISTOGRAM.Enum(),
				Metric: []*dto.Metric{{Label: l, Histogram: &dto.Histogram{SampleCount: proto.Uint64(total), SampleSum: proto.Float64(counter),
					Bucket: []*dto.Bucket{{UpperBound: proto.Float64(bound), CumulativeCount: proto.Uint64(below)}}}}}},
		}
		body, err := Encode(fams, Batch{Now: time.Unix(1, 0)})
		if err != nil {
			t.Fatal(err)
		}
		md, err := (&pmetric.JSONUnmarshaler{}).UnmarshalMetrics(body)
		if err != nil {
			t.Fatalf("%v\n%s", err, body)
		}
		if finite(counter) && md.DataPointCount() < 1 {
			t.Fatalf("finite counter %v not pushed:\n%s", counter, body)
		}
		ms := md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
		for i := range ms.Len() {
			if m := ms.At(i); m.Type() == pmetric.MetricTypeHistogram {
				for j := range m.Histogram().DataPoints().Len() {
					p := m.Histogram().DataPoints().At(j)
					if p.BucketCounts().Len() != p.ExplicitBounds().Len()+1 {
						t.Fatalf("%d counts for %d bounds", p.BucketCounts().Len(), p.ExplicitBounds().Len())
					}
				}
			}
		}
	})
}
