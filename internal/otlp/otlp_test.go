package otlp

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// registry returns a registry with one family of each type and known
// values.
func registry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "reqs_total", Help: "requests"}, []string{"model"})
	c.WithLabelValues("m").Add(7)
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "in_flight", Help: "now"})
	g.Set(3)
	h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "lat_seconds", Help: "latency", Buckets: []float64{0.1, 1}})
	for _, v := range []float64{0.05, 0.5, 0.7, 2} {
		h.Observe(v)
	}
	s := prometheus.NewSummary(prometheus.SummaryOpts{Name: "gc_seconds", Help: "gc", Objectives: map[float64]float64{0.5: 0.05}})
	s.Observe(1)
	reg.MustRegister(c, g, h, s)
	return reg
}

// TestEncodeDecodes decodes Encode's body with the OpenTelemetry
// Collector's own OTLP JSON unmarshaler and checks every value.
func TestEncodeDecodes(t *testing.T) {
	fams, err := registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	start, now := time.Unix(100, 0), time.Unix(160, 5)
	body, err := Encode(fams, Batch{Resource: []Attr{{"service.name", "reprise"}}, Scope: "reprise", ScopeVersion: "v1",
		Start: start, Now: now, Rename: map[string]string{"model": "gen_ai.request.model"}})
	if err != nil {
		t.Fatal(err)
	}
	md, err := (&pmetric.JSONUnmarshaler{}).UnmarshalMetrics(body)
	if err != nil {
		t.Fatalf("%v\n%s", err, body)
	}
	rm := md.ResourceMetrics().At(0)
	if v, _ := rm.Resource().Attributes().Get("service.name"); v.Str() != "reprise" {
		t.Errorf("service.name = %q", v.Str())
	}
	sm := rm.ScopeMetrics().At(0)
	if sm.Scope().Name() != "reprise" || sm.Scope().Version() != "v1" {
		t.Errorf("scope = %s %s", sm.Scope().Name(), sm.Scope().Version())
	}
	got := map[string]pmetric.Metric{}
	for i := range sm.Metrics().Len() {
		got[sm.Metrics().At(i).Name()] = sm.Metrics().At(i)
	}
	sum := got["reqs_total"].Sum()
	if !sum.IsMonotonic() || sum.AggregationTemporality() != pmetric.AggregationTemporalityCumulative || sum.DataPoints().At(0).DoubleValue() != 7 {
		t.Errorf("reqs_total: monotonic %v, temporality %v, value %v", sum.IsMonotonic(), sum.AggregationTemporality(), sum.DataPoints().At(0).DoubleValue())
	}
	p := sum.DataPoints().At(0)
	if v, _ := p.Attributes().Get("gen_ai.request.model"); v.Str() != "m" {
		t.Errorf("renamed label = %q", v.Str())
	}
	if !p.StartTimestamp().AsTime().Equal(start) || !p.Timestamp().AsTime().Equal(now) {
		t.Errorf("times %v %v", p.StartTimestamp().AsTime(), p.Timestamp().AsTime())
	}
	if v := got["in_flight"].Gauge().DataPoints().At(0).DoubleValue(); v != 3 {
		t.Errorf("in_flight = %v", v)
	}
	h := got["lat_seconds"].Histogram().DataPoints().At(0)
	if got["lat_seconds"].Unit() != "s" || h.Count() != 4 || h.Sum() != 3.25 {
		t.Errorf("lat_seconds: unit %q, count %d, sum %v", got["lat_seconds"].Unit(), h.Count(), h.Sum())
	}
	// 0.05 ≤ 0.1; 0.5 and 0.7 in (0.1, 1]; 2 above every bound.
	if d := cmp.Diff([]uint64{1, 2, 1}, h.BucketCounts().AsRaw()); d != "" {
		t.Errorf("bucket counts (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]float64{0.1, 1}, h.ExplicitBounds().AsRaw()); d != "" {
		t.Errorf("bounds (-want +got):\n%s", d)
	}
	s := got["gc_seconds"].Summary().DataPoints().At(0)
	if s.Count() != 1 || s.QuantileValues().At(0).Value() != 1 {
		t.Errorf("gc_seconds: count %d, p50 %v", s.Count(), s.QuantileValues().At(0).Value())
	}
}

func TestMetricsURL(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"localhost:4318", "http://localhost:4318/v1/metrics"},
		{"http://c:4318/", "http://c:4318/v1/metrics"},
		{"https://c/otlp/v1/metrics", "https://c/otlp/v1/metrics"},
		{"https://c/otlp", "https://c/otlp/v1/metrics"},
	} {
		if got, err := MetricsURL(c.in); err != nil || got != c.want {
			t.Errorf("MetricsURL(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"grpc://c:4317", "file:///tmp", "http://"} {
		if _, err := MetricsURL(bad); err == nil {
			t.Errorf("MetricsURL(%q): no error", bad)
		}
	}
}

// collector is an httptest OTLP/HTTP receiver keeping each body.
type collector struct {
	mu     sync.Mutex
	bodies [][]byte
	status int
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	c.mu.Lock()
	defer c.mu.Unlock()
	if r.URL.Path != MetricsPath || r.Header.Get("Content-Type") != "application/json" || r.Header.Get("X-Tenant") != "t" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	if c.status != 0 {
		http.Error(w, "down", c.status)
		return
	}
	c.bodies = append(c.bodies, b)
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, "{}")
}

// TestPusherFinalPush checks that Close pushes once more and that each
// push carries the headers and the current values.
func TestPusherFinalPush(t *testing.T) {
	c := &collector{}
	srv := httptest.NewServer(c)
	defer srv.Close()
	reg := registry()
	p := NewPusher(Config{URL: srv.URL + MetricsPath, Gatherer: reg, Headers: http.Header{"X-Tenant": {"t"}},
		Keep: func(n string) bool { return n == "reqs_total" }})
	if !p.Push(t.Context()) {
		t.Fatal("first push refused")
	}
	if n := p.Close(t.Context()); n != 2 {
		t.Errorf("accepted pushes = %d, want 2", n)
	}
	md, err := (&pmetric.JSONUnmarshaler{}).UnmarshalMetrics(c.bodies[1])
	if err != nil {
		t.Fatal(err)
	}
	if n := md.MetricCount(); n != 1 {
		t.Errorf("metrics pushed = %d, want 1 (Keep)", n)
	}
}

// TestPusherDeadCollector checks that a collector that refuses or is
// gone is warned about once and that Push returns at once.
func TestPusherDeadCollector(t *testing.T) {
	c := &collector{status: http.StatusServiceUnavailable}
	srv := httptest.NewServer(c)
	var log strings.Builder
	p := NewPusher(Config{URL: srv.URL + MetricsPath, Gatherer: registry(), Headers: http.Header{"X-Tenant": {"t"}},
		Log: slogTo(&log)})
	if p.Push(context.Background()) {
		t.Error("a 503 was counted as accepted")
	}
	srv.Close() // now nothing listens
	p.Start(t.Context(), time.Millisecond)
	if n := p.Close(t.Context()); n != 0 {
		t.Errorf("accepted pushes = %d, want 0", n)
	}
	if got := strings.Count(log.String(), "OTLP push failed"); got != 1 {
		t.Errorf("%d warnings, want 1:\n%s", got, log.String())
	}
	if !strings.Contains(log.String(), "503") {
		t.Errorf("the warning does not say why:\n%s", log.String())
	}
}
