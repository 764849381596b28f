package summary

import (
	"bytes"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-bench/reprise/engine/record"
)

var update = flag.Bool("update", false, "rewrite golden files")

func golden(t *testing.T, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", t.Name()+".golden")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create)", err)
	}
	if d := cmp.Diff(string(want), string(got)); d != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", path, d)
	}
}

// testRecords is a small deterministic run: 10 streamed requests with
// known timings, one HTTP error, one stream error, one warmup.
func testRecords() []record.Request {
	const t0 = int64(1_800_000_000_000_000_000)
	var rs []record.Request
	for i := range 10 {
		sent := t0 + int64(i)*100e6 // every 100 ms
		ttft := int64(20+i) * 1e6   // 20..29 ms
		e2e := ttft + 15*5e6        // 16 tokens, 5 ms apart
		r := record.Request{
			RequestID: uint64(i), TraceRow: int64(i),
			IntendedNS: sent - int64(i)*1000, DispatchedNS: sent, SentNS: sent, WroteNS: sent + 1e5,
			HeadersNS: sent + ttft - 1e6, FirstEventNS: sent + ttft - 1e6,
			FirstTokenNS: sent + ttft, FirstOutputTokenNS: sent + ttft, SecondTokenNS: sent + ttft + 5e6,
			LastTokenNS: sent + e2e, EndNS: sent + e2e + 1e5,
			TTFTNS: ttft, TTFONS: ttft, TTSTNS: 5e6, ITLNS: 5e6, E2ENS: e2e,
			LatenessNS: int64(i) * 1000, LatencyFromIntendedNS: e2e + int64(i)*1000,
			InputTokens: 100, OutputTokens: 16, MaxTokens: 16,
			ServerPromptTokens: 100, ServerCompletionTokens: 16, ServerReasoningTokens: -1,
			ServerCachedTokens: int32(10 * i), ExpectedCachedTokens: 50,
			Events: 19, ContentEvents: 16, Reads: 18, MaxEventsRead: 2, BytesReceived: 4000, BytesSent: 500,
			StatusCode: 200, FinishReason: "length", ConnReused: i > 0,
			OutputTokensSource: record.TokensServer,
		}
		if i == 3 {
			// The client's tokenizer counted two more tokens than the
			// server generated; OSL and ITL use the server's 16.
			r.OutputTokens = 18
			r.ServerMinusClientOutputTokens = -2
		}
		rs = append(rs, r)
	}
	rs = append(rs, record.Request{RequestID: 10, IntendedNS: t0 + 1e9, DispatchedNS: t0 + 1e9, SentNS: t0 + 1e9,
		EndNS: t0 + 1e9 + 2e6, StatusCode: 429, ErrorKind: record.ErrHTTPStatus, ErrorMessage: "HTTP 429 Too Many Requests: slow down",
		ServerPromptTokens: -1, ServerCompletionTokens: -1, ServerReasoningTokens: -1, ServerCachedTokens: -1, ExpectedCachedTokens: -1})
	rs = append(rs, record.Request{RequestID: 11, IntendedNS: t0 + 11e8, DispatchedNS: t0 + 11e8 + 3e6, SentNS: t0 + 11e8 + 3e6,
		LatenessNS: 3e6, EndNS: t0 + 11e8 + 50e6, StatusCode: 200, ErrorKind: record.ErrStreamError, ErrorMessage: "Failed to parse input",
		ServerPromptTokens: -1, ServerCompletionTokens: -1, ServerReasoningTokens: -1, ServerCachedTokens: -1, ExpectedCachedTokens: -1})
	rs = append(rs, record.Request{RequestID: 12, Phase: record.PhaseWarmup, SentNS: t0 - 1e9, E2ENS: 5e6, StatusCode: 200})
	return rs
}

func testSummary(t *testing.T) *Summary {
	slos, err := ParseGoodput("ttft:25 itl:10")
	if err != nil {
		t.Fatal(err)
	}
	info := RunInfo{Model: "m", URL: "http://127.0.0.1:8000", Endpoint: "openai-chat", Mode: "fixed", Trace: "t.jsonl",
		Streaming: true, Start: time.Unix(1_800_000_000, 0).UTC(), End: time.Unix(1_800_000_002, 0).UTC(), Planned: 12, Version: "test"}
	return Summarize(testRecords(), info, Options{Streaming: true, Goodput: slos})
}

func TestSummaryJSON(t *testing.T) {
	b, err := testSummary(t).JSON()
	if err != nil {
		t.Fatal(err)
	}
	golden(t, b)
}

func TestSummaryTable(t *testing.T) {
	var buf bytes.Buffer
	if err := testSummary(t).WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	golden(t, buf.Bytes())
}

func TestSummaryValues(t *testing.T) {
	s := testSummary(t)
	if s.RequestCount != 10 || s.ErrorRequestCount != 2 || s.WarmupCount != 1 {
		t.Fatalf("counts %d/%d/%d", s.RequestCount, s.ErrorRequestCount, s.WarmupCount)
	}
	ttft := s.Metrics["time_to_first_token"]
	// 20..29 ms: mean 24.5, p50 24.5, p99 = 20 + 9·0.99·… = 28.91
	if ttft.Avg != 24.5 || ttft.Min != 20 || ttft.Max != 29 || math.Abs(ttft.P99-28.91) > 1e-9 {
		t.Errorf("ttft %+v", ttft)
	}
	// population std of 20..29 = sqrt(8.25)
	if math.Abs(ttft.Std-math.Sqrt(8.25)) > 1e-9 {
		t.Errorf("std %v", ttft.Std)
	}
	// good: ttft ≤ 25 ms → 20..25 = 6 requests (ITL 5 ms passes); fraction over 12 measured.
	if s.GoodRequestCount != 6 || math.Abs(s.GoodRequestFraction-0.5) > 1e-12 {
		t.Errorf("good %d fraction %v", s.GoodRequestCount, s.GoodRequestFraction)
	}
	// lateness is over all measured requests, errors included (12 values).
	if n := s.Metrics["schedule_lateness"].Count; n != 12 {
		t.Errorf("lateness count %d", n)
	}
	if s.ErrorsByKind[record.ErrHTTPStatus] != 1 || s.ErrorsByKind[record.ErrStreamError] != 1 {
		t.Errorf("errors %v", s.ErrorsByKind)
	}
	// cached: Σ 10·i = 450 of Σ 50 = 500.
	if s.CacheFidelity != 0.9 {
		t.Errorf("cache fidelity %v", s.CacheFidelity)
	}
	// duration: first send t0 to the last response end of any outcome,
	// the stream error's at t0+1.1 s+50 ms (the last ok one ends at
	// t0+0.9 s+29 ms+75 ms).
	if want := 1100*time.Millisecond + 50*time.Millisecond; s.BenchmarkDuration != want {
		t.Errorf("duration %v want %v", s.BenchmarkDuration, want)
	}
}

// TestPercentile checks the numpy linear interpolation against values
// computed with numpy.percentile.
func TestPercentile(t *testing.T) {
	v := []float64{1, 2, 3, 4, 10}
	cases := []struct{ p, want float64 }{
		{0, 1}, {25, 2}, {50, 3}, {90, 7.6}, {99, 9.76}, {100, 10},
	}
	for _, c := range cases {
		if got := Percentile(v, c.p); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("p%v = %v, want %v", c.p, got, c.want)
		}
	}
	if got := Percentile([]float64{7}, 99); got != 7 {
		t.Errorf("single value p99 = %v", got)
	}
}

// TestComputeOracle compares Compute with a slow, obvious implementation.
func TestComputeOracle(t *testing.T) {
	vals := []float64{5, 3, 9, 1, 1, 7, 2, 8, 6, 4, 0.5}
	st := Compute(append([]float64(nil), vals...))
	var sum float64
	for _, v := range vals {
		sum += v
	}
	mean := sum / float64(len(vals))
	var ss float64
	for _, v := range vals {
		ss += (v - mean) * (v - mean)
	}
	if st.Avg != mean || st.Std != math.Sqrt(ss/float64(len(vals))) || st.Count != len(vals) || st.Sum != sum {
		t.Errorf("%+v", st)
	}
}

func TestParseGoodput(t *testing.T) {
	got, err := ParseGoodput("ttft:250 itl:10,e2e:2000 time_to_first_output_token:300 tps:20")
	if err != nil {
		t.Fatal(err)
	}
	want := []SLO{{"time_to_first_token", 250}, {"inter_token_latency", 10}, {"request_latency", 2000},
		{"time_to_first_output_token", 300}, {"output_token_throughput_per_user", 20}}
	if d := cmp.Diff(want, got); d != "" {
		t.Error(d)
	}
	for _, bad := range []string{"ttft", "nope:3", "ttft:-1", "ttft:abc", "http_req_blocked:3"} {
		if _, err := ParseGoodput(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	_, err = ParseGoodput("nope:1 ttft:x")
	if err == nil || !strings.Contains(err.Error(), "nope") || !strings.Contains(err.Error(), "ttft:x") {
		t.Errorf("want both problems reported, got %v", err)
	}
}

// TestAccumulatorIncremental: summarizing twice, or in pieces, is stable.
func TestAccumulatorIncremental(t *testing.T) {
	rs := testRecords()
	a := NewAccumulator(Options{Streaming: true})
	for i := range rs[:5] {
		a.Add(&rs[i])
	}
	_ = a.Summary(RunInfo{})
	for i := range rs[5:] {
		a.Add(&rs[5+i])
	}
	got, _ := a.Summary(RunInfo{}).JSON()
	want, _ := Summarize(rs, RunInfo{}, Options{Streaming: true}).JSON()
	if !bytes.Equal(got, want) {
		t.Error(cmp.Diff(string(want), string(got)))
	}
}

// TestSummaryTableAllAtOnce: a schedule with every request due at the
// same instant has no intended rate, and the table says why instead of
// printing 0.
func TestSummaryTableAllAtOnce(t *testing.T) {
	rs := testRecords()[:10]
	for i := range rs {
		rs[i].IntendedNS = rs[0].IntendedNS
	}
	s := Summarize(rs, RunInfo{Model: "m", Mode: "fixed"}, Options{Streaming: true})
	var buf bytes.Buffer
	if err := s.WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	if s.IntendedRate != 0 || s.AchievedRate <= 0 || !strings.Contains(buf.String(), "— (all due at once) / ") {
		t.Errorf("intended %v achieved %v; table:\n%s", s.IntendedRate, s.AchievedRate, buf.String())
	}
}

// TestBenchmarkDurationAnyOutcome: the benchmark duration runs from the
// first send to the last response end of any outcome. A 30 s run whose
// server died at 10 s (successes until then, then a failure every second
// until the end) lasted 30 s, not 10 s; the throughputs divide by it.
func TestBenchmarkDurationAnyOutcome(t *testing.T) {
	const t0 = int64(1_800_000_000_000_000_000)
	var rs []record.Request
	for i := range 10 { // ok: sent at 0..9 s, 500 ms each
		sent := t0 + int64(i)*1e9
		rs = append(rs, record.Request{RequestID: uint64(i), SentNS: sent, E2ENS: 500e6, LastTokenNS: sent + 500e6,
			EndNS: sent + 500e6, InputTokens: 10, OutputTokens: 5, StatusCode: 200})
	}
	for i := 10; i < 30; i++ { // failed: sent at 10..29 s, refused after 1 s
		sent := t0 + int64(i)*1e9
		rs = append(rs, record.Request{RequestID: uint64(i), SentNS: sent, EndNS: sent + 1e9,
			ErrorKind: record.ErrConnect, ErrorMessage: "connection refused"})
	}
	// Never sent (--late skip): not part of the span.
	rs = append(rs, record.Request{RequestID: 30, ErrorKind: record.ErrNotDelivered})
	s := Summarize(rs, RunInfo{}, Options{Streaming: true})
	if want := 30 * time.Second; s.BenchmarkDuration != want {
		t.Errorf("benchmark duration %v, want %v (first send to the last response of any outcome)", s.BenchmarkDuration, want)
	}
	if want := 10.0 / 30; math.Abs(s.RequestThroughput-want) > 1e-12 {
		t.Errorf("request throughput %v, want %v", s.RequestThroughput, want)
	}
	if s.WindowStartNS != t0 || s.WindowEndNS != t0+30e9 {
		t.Errorf("window [%d, %d], want [%d, %d]", s.WindowStartNS, s.WindowEndNS, t0, t0+int64(30e9))
	}
	// A run in which everything failed still lasted from its first send
	// to its last failure.
	all := Summarize(rs[10:], RunInfo{}, Options{Streaming: true})
	if want := 20 * time.Second; all.BenchmarkDuration != want {
		t.Errorf("all failed: benchmark duration %v, want %v", all.BenchmarkDuration, want)
	}
}

// TestOSLSource: a record's output length is the count its ITL used (its
// OutputTokensSource); records that do not say follow the run's
// UseServerTokenCount; summary.json counts the sources.
func TestOSLSource(t *testing.T) {
	rec := func(src record.TokenSource, client, server int32) record.Request {
		return record.Request{SentNS: 1e9, E2ENS: 1e9, StatusCode: 200, OutputTokens: client, ServerCompletionTokens: server,
			OutputTokensSource: src, ServerMinusClientOutputTokens: record.NoTokenDiff}
	}
	for _, tc := range []struct {
		name     string
		reqs     []record.Request
		useSrv   bool
		osl      int64
		jsonPart string
	}{
		{"server", []record.Request{rec(record.TokensServer, 104, 100), rec(record.TokensServer, 98, 100)}, false, 200, `"server": 2`},
		{"client", []record.Request{rec(record.TokensClient, 104, 100), rec(record.TokensClient, 98, -1)}, true, 202, `"client": 2`},
		{"mixed", []record.Request{rec(record.TokensServer, 104, 100), rec(record.TokensClient, 98, -1)}, false, 198, `"server": 1`},
		// Older files: no source; the run's setting decides.
		{"legacy server", []record.Request{rec(record.TokensUnknown, 104, 100)}, true, 100, `"server": 1`},
		{"legacy client", []record.Request{rec(record.TokensUnknown, 104, 100)}, false, 104, `"client": 1`},
	} {
		s := Summarize(tc.reqs, RunInfo{}, Options{UseServerTokenCount: tc.useSrv})
		if s.TotalOSL != tc.osl {
			t.Errorf("%s: total OSL %d, want %d", tc.name, s.TotalOSL, tc.osl)
		}
		b, err := s.JSON()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), tc.jsonPart) {
			t.Errorf("%s: summary.json's output_tokens_source lacks %s", tc.name, tc.jsonPart)
		}
	}
}

// TestTelemetryServerView: the server's latency histograms are shown as
// the server's own view beside the client's numbers, never as the truth
// the client is measured against ("overhead").
func TestTelemetryServerView(t *testing.T) {
	s := testSummary(t)
	s.Telemetry = &Telemetry{Servers: []ServerSummary{{
		Target: "http://127.0.0.1:8000/metrics", Family: "vllm", Scrapes: 3,
		TTFT: &HistogramStats{Metric: "vllm:time_to_first_token_seconds", Count: 10, MeanMS: 20},
	}}}
	var buf bytes.Buffer
	if err := s.WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	table := buf.String()
	if !strings.Contains(table, "client 24.50; server's own histogram 20.00 (client − server 4.50)") || strings.Contains(table, "overhead") {
		t.Errorf("table:\n%s", table)
	}
	b, err := s.JSON()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"client_minus_server_ms": 4.5`, `"server_metric": "vllm:time_to_first_token_seconds"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("summary.json lacks %s", want)
		}
	}
	if strings.Contains(string(b), "overhead") {
		t.Error("summary.json calls the difference overhead")
	}
}

// TestTelemetryQuantileBuckets: a server histogram's quantiles are
// printed as the buckets they fall in, the interpolated value named as
// such, and summary.json keeps the buckets (telemetry.md).
func TestTelemetryQuantileBuckets(t *testing.T) {
	s := testSummary(t)
	five, ten := 5.0, 10.0
	in := &Bucket{LowMS: 0, HighMS: &ten}
	s.Telemetry = &Telemetry{Servers: []ServerSummary{{
		Target: "http://127.0.0.1:8000/metrics", Family: "vllm", Scrapes: 3,
		ITL: &HistogramStats{Metric: "vllm:inter_token_latency_seconds", Count: 100, MeanMS: 10,
			P50MS: &five, P90MS: &ten, P99MS: &ten, P50Bucket: in, P90Bucket: in, P99Bucket: in},
	}}}
	var buf bytes.Buffer
	if err := s.WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	if want := "inter_token_latency p50/90/99    server histogram buckets (0, 10] / (0, 10] / (0, 10] ms (interpolated 5.00 / 10.00 / 10.00: only the bucket is measured)"; !strings.Contains(buf.String(), want) {
		t.Errorf("table lacks %q:\n%s", want, buf.String())
	}
	b, err := s.JSON()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"p50_bucket": {`) {
		t.Errorf("summary.json lacks the p50 bucket:\n%s", b)
	}
}
