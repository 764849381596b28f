package livemetrics

import (
	"context"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/engine/summary"
)

// records is a mix of every outcome: measured successes with tokens, a
// warmup, failures, a planned cancel, a skipped request, and a second
// target's success.
func records() []record.Request {
	ok := func(id uint64, ttft, e2e int64, out int32) record.Request {
		return record.Request{RequestID: id, IntendedNS: 1e9, DispatchedNS: 1e9 + 2000, SentNS: 1e9 + 3000, LatenessNS: 2000,
			FirstTokenNS: 1e9 + 3000 + ttft, FirstOutputTokenNS: 1e9 + 3000 + ttft, TTFTNS: ttft, TTFONS: ttft,
			LastTokenNS: 1e9 + 3000 + e2e, EndNS: 1e9 + 3000 + e2e, E2ENS: e2e, ITLNS: float64(e2e-ttft) / float64(max(out-1, 1)),
			InputTokens: 100, OutputTokens: out, OutputTokensSource: record.TokensClient, StatusCode: 200,
			ServerPromptTokens: -1, ServerCompletionTokens: -1, ServerCachedTokens: -1, ServerReasoningTokens: -1, ExpectedCachedTokens: -1}
	}
	rs := []record.Request{ok(0, 30e6, 500e6, 50), ok(1, 7e6, 90e6, 1), ok(2, 2e9, 3e9, 200)}
	w := ok(3, 10e6, 20e6, 5)
	w.Phase = record.PhaseWarmup
	rs = append(rs, w)
	f := ok(4, 0, 0, 0)
	f.FirstTokenNS, f.FirstOutputTokenNS, f.LastTokenNS, f.TTFTNS, f.TTFONS, f.E2ENS, f.ITLNS = 0, 0, 0, 0, 0, 0, 0
	f.ErrorKind, f.StatusCode, f.LatenessNS = record.ErrHTTPStatus, 503, 9e6
	rs = append(rs, f)
	c := ok(5, 40e6, 0, 3)
	c.ErrorKind, c.CancelAfterNS, c.E2ENS = record.ErrCancelled, 60e6, 0
	rs = append(rs, c)
	s := record.Request{RequestID: 6, IntendedNS: 2e9, LatenessNS: 5e9, ErrorKind: record.ErrNotDelivered}
	rs = append(rs, s)
	t1 := ok(7, 12e6, 300e6, 20)
	t1.Target = 1
	rs = append(rs, t1)
	return rs
}

func newTestMetrics() *Metrics {
	return New(Config{RunID: "r1", Targets: []Target{{URL: "http://a", Model: "m"}, {URL: "http://b", Model: "m2"}}, Streaming: true})
}

// family returns the named family's metrics whose labels include want.
func family(t *testing.T, m *Metrics, name string, want map[string]string) []*dto.Metric {
	t.Helper()
	fams, err := m.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []*dto.Metric
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	next:
		for _, mt := range f.GetMetric() {
			got := map[string]string{}
			for _, l := range mt.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			for k, v := range want {
				if got[k] != v {
					continue next
				}
			}
			out = append(out, mt)
		}
	}
	return out
}

// TestObserveMatchesSummary checks Observe against engine/summary, the
// oracle: counts, sums and error counts as the summary computes them
// from the same records.
func TestObserveMatchesSummary(t *testing.T) {
	rs := records()
	m := newTestMetrics()
	m.Observe(rs)
	acc := summary.NewAccumulator(summary.Options{Streaming: true})
	for i := range rs {
		if rs[i].Target == 0 {
			acc.Add(&rs[i])
		}
	}
	s := acc.Summary(summary.RunInfo{})
	a := map[string]string{"target": "http://a", "run_id": "r1"}
	hist := func(name string) *dto.Histogram {
		ms := family(t, m, name, a)
		if len(ms) != 1 {
			t.Fatalf("%s: %d series for target a, want 1", name, len(ms))
		}
		return ms[0].GetHistogram()
	}
	for _, c := range []struct {
		name, tag string
	}{
		{NameTTFT, "time_to_first_token"},
		{NameTTFO, "time_to_first_output_token"},
		{NameITL, "inter_token_latency"},
		{NameE2E, "request_latency"},
		{NameLateness, "schedule_lateness"},
	} {
		h := hist(c.name)
		st, ok := s.Metrics[c.tag]
		if !ok {
			t.Fatalf("summary has no %s", c.tag)
		}
		if int(h.GetSampleCount()) != st.Count {
			t.Errorf("%s: count %d, summary's %s %d", c.name, h.GetSampleCount(), c.tag, st.Count)
		}
		// The summary's mean is in ms.
		if mean := h.GetSampleSum() / float64(h.GetSampleCount()) * 1e3; math.Abs(mean-st.Avg) > 1e-9*math.Abs(st.Avg) {
			t.Errorf("%s: mean %v ms, summary's %v", c.name, mean, st.Avg)
		}
	}
	count := func(want map[string]string) float64 {
		var n float64
		for _, mt := range family(t, m, NameRequests, want) {
			n += mt.GetCounter().GetValue()
		}
		return n
	}
	if got := count(map[string]string{"target": "http://a", "phase": "profile", "outcome": OutcomeOK}); got != float64(s.RequestCount) {
		t.Errorf("ok requests %v, summary's request_count %d", got, s.RequestCount)
	}
	if got := count(map[string]string{"target": "http://a", "phase": "profile", "outcome": OutcomeError}); got != float64(s.ErrorRequestCount) {
		t.Errorf("failed requests %v, summary's error_request_count %d", got, s.ErrorRequestCount)
	}
	for k, n := range s.ErrorsByKind {
		if got := count(map[string]string{"target": "http://a", "phase": "profile", "outcome": OutcomeError, "error_kind": string(k)}); got != float64(n) {
			t.Errorf("errors of kind %s: %v, summary's %d", k, got, n)
		}
	}
	if got := count(map[string]string{"target": "http://a", "outcome": OutcomeCancelled}); got != float64(s.CancelledRequestCount) {
		t.Errorf("planned cancels %v, summary's %d", got, s.CancelledRequestCount)
	}
	if got := count(map[string]string{"phase": "warmup"}); got != 1 {
		t.Errorf("warmup requests %v, want 1", got)
	}
	if got := family(t, m, NameInputTokens, a)[0].GetCounter().GetValue(); got != float64(s.TotalISL) {
		t.Errorf("input tokens %v, summary's %d", got, s.TotalISL)
	}
	if got := family(t, m, NameOutputTokens, a)[0].GetCounter().GetValue(); got != float64(s.TotalOSL) {
		t.Errorf("output tokens %v, summary's %d", got, s.TotalOSL)
	}
	// Target b's request is b's alone.
	if got := family(t, m, NameTTFT, map[string]string{"target": "http://b", "model": "m2"})[0].GetHistogram().GetSampleCount(); got != 1 {
		t.Errorf("target b TTFT count %d, want 1", got)
	}
}

// TestNotStreaming: without streaming, the streaming-only histograms
// stay empty, as the summary leaves their metrics out.
func TestNotStreaming(t *testing.T) {
	m := New(Config{RunID: "r"})
	m.Observe(records()[:3])
	for _, n := range []string{NameTTFT, NameTTFO, NameITL} {
		if c := family(t, m, n, nil)[0].GetHistogram().GetSampleCount(); c != 0 {
			t.Errorf("%s: %d observations without streaming", n, c)
		}
	}
	if c := family(t, m, NameE2E, nil)[0].GetHistogram().GetSampleCount(); c != 3 {
		t.Errorf("E2E: %d observations, want 3", c)
	}
}

// TestGauges: in-flight and intended rate read their sources at each
// gather; the rate is absent while the schedule has none.
func TestGauges(t *testing.T) {
	m := newTestMetrics()
	if got := family(t, m, NameInFlight, map[string]string{"target": "http://b"})[0].GetGauge().GetValue(); got != 0 {
		t.Errorf("in flight before SetInFlight: %v", got)
	}
	if got := family(t, m, NameIntendedRate, nil); len(got) != 0 {
		t.Errorf("intended rate before SetIntendedRate: %v", got)
	}
	m.SetInFlight(func(t int) int64 { return int64(10 + t) })
	rate, has := 0.0, false
	m.SetIntendedRate(func() (float64, bool) { return rate, has })
	if got := family(t, m, NameInFlight, map[string]string{"target": "http://b"})[0].GetGauge().GetValue(); got != 11 {
		t.Errorf("in flight of target b: %v, want 11", got)
	}
	if got := family(t, m, NameIntendedRate, nil); len(got) != 0 {
		t.Errorf("intended rate of a schedule without one: %v", got)
	}
	rate, has = 12.5, true
	if got := family(t, m, NameIntendedRate, map[string]string{"run_id": "r1"}); len(got) != 1 || got[0].GetGauge().GetValue() != 12.5 {
		t.Errorf("intended rate: %v, want 12.5", got)
	}
	if got := family(t, m, NameRunInfo, map[string]string{"format_version": FormatVersion}); len(got) != 1 {
		t.Errorf("run info: %v", got)
	}
}

// TestObserveAllocs is the allocation budget of the per-record path:
// nothing.
func TestObserveAllocs(t *testing.T) {
	m := newTestMetrics()
	rs := records()
	if n := testing.AllocsPerRun(100, func() { m.Observe(rs) }); n != 0 {
		t.Errorf("Observe of %d records allocates %v times, want 0", len(rs), n)
	}
}

// BenchmarkObserve is the cost per record (ns/op is per record), paid
// on the collector's goroutine. TestObserveMatchesSummary checks what it
// computes.
func BenchmarkObserve(b *testing.B) {
	m := newTestMetrics()
	rs := records()
	batch := make([]record.Request, 0, 512)
	for len(batch) < cap(batch) {
		batch = append(batch, rs[len(batch)%len(rs)])
	}
	b.ReportAllocs()
	for b.Loop() {
		m.Observe(batch)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(batch)), "ns/record")
}

// TestServerLinger: the server answers before Serve (an empty page),
// serves the metrics after, and Linger returns as soon as a scrape begun
// after the end was answered.
func TestServerLinger(t *testing.T) {
	s, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	get := func() string {
		t.Helper()
		resp, err := http.Get("http://" + s.Addr() + Path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d, %v", Path, resp.StatusCode, err)
		}
		return string(b)
	}
	if body := get(); body != "" {
		t.Errorf("before Serve: %q, want an empty page", body)
	}
	m := newTestMetrics()
	m.Observe(records())
	s.Serve(m)
	if body := get(); !strings.Contains(body, NameTTFT+`_count{model="m",run_id="r1",target="http://a"} 3`) {
		t.Errorf("the page lacks target a's TTFT count of 3:\n%s", body)
	}
	done := make(chan bool)
	go func() { done <- s.Linger(t.Context(), time.Hour) }()
	// Linger returns only after a scrape that began after the end.
	for {
		get()
		select {
		case scraped := <-done:
			if !scraped {
				t.Error("Linger returned without a scrape")
			}
			if err := s.Close(t.Context()); err != nil {
				t.Error(err)
			}
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// TestLingerCancelled: a cancelled context ends the wait, with no
// scrape.
func TestLingerCancelled(t *testing.T) {
	s, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(t.Context())
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if s.Linger(ctx, time.Hour) {
		t.Error("Linger reported a scrape")
	}
	if s.Linger(t.Context(), 0) {
		t.Error("Linger 0 reported a scrape")
	}
}

// TestListenBadAddr names the address and the form it wants.
func TestListenBadAddr(t *testing.T) {
	_, err := Listen("9464")
	if err == nil || !strings.Contains(err.Error(), `"9464"`) || !strings.Contains(err.Error(), "HOST:PORT") {
		t.Errorf("Listen(9464): %v", err)
	}
}
