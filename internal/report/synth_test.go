package report

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/engine/summary"
)

// synthRun describes a run directory written through arrowio's writers
// without a replay: requests at a fixed rate with latencies that follow
// known formulas, so a large run takes seconds to make.
type synthRun struct {
	n         int           // requests, warmup included
	rate      float64       // requests per second
	ttft      time.Duration // base TTFT; each request adds 2 µs per input token
	itl       time.Duration
	errEvery  int // every errEvery-th request fails (0: none), kinds in turn
	warmup    int // the first warmup requests are warmup
	telemetry bool
	seed      uint64
	fixedLen  bool // every request 512 tokens in, 64 out
}

// synthStart is the synthetic runs' start time.
var synthStart = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

// errKinds are the kinds synthetic failures take in turn.
var errKinds = []record.ErrorKind{record.ErrTimeout, record.ErrHTTPStatus, record.ErrReset}

// write makes the run directory dir and returns its summary.
func (c synthRun) write(t testing.TB, dir string) *summary.Summary {
	t.Helper()
	run, err := arrowio.Create(dir, arrowio.CreateConfig{})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(c.seed, 7))
	t0 := synthStart.UnixNano()
	opts := summary.Options{Streaming: true}
	acc := summary.NewAccumulator(opts)
	batch := make([]record.Request, 0, 4096)
	var lastEnd int64
	flush := func() {
		if err := run.Records().WriteRequests(batch); err != nil {
			t.Fatal(err)
		}
		batch = batch[:0]
	}
	nErr := 0
	for i := range c.n {
		isl := int32(100 + rng.IntN(4000))
		osl := int32(20 + rng.IntN(300))
		if c.fixedLen {
			isl, osl = 512, 64
		}
		intended := t0 + int64(float64(i)*1e9/c.rate)
		late := int64(rng.ExpFloat64() * 20e3) // ~20 µs
		r := record.Request{RequestID: uint64(i), TraceRow: int64(i), IntendedNS: intended, DispatchedNS: intended + late,
			SentNS: intended + late + 5e3, InputTokens: isl, TraceInputTokens: isl, MaxTokens: osl,
			ServerPromptTokens: isl, ServerCompletionTokens: -1, ServerReasoningTokens: -1,
			ServerCachedTokens: isl / 2, ExpectedCachedTokens: isl/2 + int32(rng.IntN(64)) - 32,
			OutputTokensSource: record.TokensClient, ServerMinusClientOutputTokens: record.NoTokenDiff,
			StatusCode: 200, LatenessNS: late, ReadLagNS: int64(rng.ExpFloat64() * 50e3)}
		r.WroteNS = r.SentNS + 2e3
		if i < c.warmup {
			r.Phase = record.PhaseWarmup
		}
		ttft := c.ttft + time.Duration(isl)*2*time.Microsecond + time.Duration(rng.ExpFloat64()*float64(c.ttft)/4)
		if c.errEvery > 0 && i%c.errEvery == c.errEvery-1 {
			r.ErrorKind = errKinds[nErr%len(errKinds)]
			nErr++
			r.ErrorMessage = string(r.ErrorKind) + " (synthetic)"
			switch r.ErrorKind {
			case record.ErrTimeout:
				r.HeadersNS = r.SentNS + 1e6
				r.FirstTokenNS = r.SentNS + int64(ttft)
				r.EndNS = r.SentNS + int64(2*time.Second)
			case record.ErrHTTPStatus:
				r.StatusCode = 503
				r.HeadersNS = r.SentNS + 1e6
				r.EndNS = r.HeadersNS + 1e5
			default:
				r.EndNS = r.SentNS + int64(ttft/2)
			}
		} else {
			r.HeadersNS = r.SentNS + 1e6
			r.FirstEventNS = r.SentNS + int64(ttft)
			r.FirstTokenNS, r.FirstOutputTokenNS = r.FirstEventNS, r.FirstEventNS
			r.SecondTokenNS = r.FirstTokenNS + int64(c.itl)
			r.LastTokenNS = r.FirstTokenNS + int64(osl-1)*int64(c.itl)
			r.EndNS = r.LastTokenNS + 1e5
			r.OutputTokens = osl
			r.TTFTNS, r.TTFONS, r.TTSTNS = int64(ttft), int64(ttft), int64(c.itl)
			r.ITLNS = float64(c.itl)
			r.E2ENS = r.LastTokenNS - r.SentNS
			r.LatencyFromIntendedNS = r.LastTokenNS - r.IntendedNS
			r.Events, r.ContentEvents, r.Reads, r.MaxEventsRead = osl+2, osl, osl, 1
			r.FinishReason = "length"
		}
		lastEnd = max(lastEnd, r.EndNS)
		acc.Add(&r)
		batch = append(batch, r)
		if len(batch) == cap(batch) {
			flush()
		}
	}
	flush()
	if c.telemetry {
		c.writeTelemetry(t, run, t0, lastEnd)
	}
	s := acc.Summary(summary.RunInfo{Model: "synthetic-model", URL: "http://127.0.0.1:8000", Endpoint: "chat", Mode: "rate",
		Streaming: true, Start: synthStart, End: time.Unix(0, lastEnd).UTC(), Planned: c.n - c.warmup})
	manifest := map[string]any{
		"reprise_version": "test", "start_time": synthStart, "trace": "synthetic.jsonl", "trace_sha256": "00ff",
		"model": "synthetic-model", "url": "http://127.0.0.1:8000", "streaming": true, "goodput": "",
		"max_error_rate": 0.05, "min_good_fraction": 0.95,
		"replay": map[string]any{"max_lateness": "0s", "late_threshold": "1ms"},
		"host":   map[string]any{"hostname": "synth", "cpus": 2},
	}
	if err := run.WriteManifest(manifest); err != nil {
		t.Fatal(err)
	}
	if err := run.WriteSummary(s, nil); err != nil {
		t.Fatal(err)
	}
	if err := run.Close(); err != nil {
		t.Fatal(err)
	}
	return s
}

// writeTelemetry writes one vLLM-like scrape and two GPUs' samples per
// second from t0 to end.
func (c synthRun) writeTelemetry(t testing.TB, run *arrowio.Run, t0, end int64) {
	t.Helper()
	mw, err := run.ServerMetrics()
	if err != nil {
		t.Fatal(err)
	}
	gw, err := run.GPU()
	if err != nil {
		t.Fatal(err)
	}
	var hits, queries, ttftSum, ttftCount float64
	target := "http://127.0.0.1:8000/metrics"
	for ts, k := t0, 0; ts <= end+int64(time.Second); ts, k = ts+int64(time.Second), k+1 {
		phase := math.Sin(float64(k) / 10)
		queries += 1000
		hits += 500 + 200*phase
		// The server's TTFT histogram sees 80 % of the base TTFT.
		ttftCount += c.rate
		ttftSum += c.rate * 0.8 * c.ttft.Seconds()
		g := func(metric, typ string, v float64) record.MetricSample {
			return record.MetricSample{TimeNS: ts, Target: target, Metric: metric, Type: typ, Labels: `model_name="m"`, Bound: math.NaN(), Value: v}
		}
		mw.Write([]record.MetricSample{
			{TimeNS: ts, Target: target, Metric: "reprise:scrape_up", Type: "gauge", Bound: math.NaN(), Value: 1},
			g("vllm:num_requests_running", "gauge", 20+10*phase),
			g("vllm:num_requests_waiting", "gauge", math.Max(0, 5*phase)),
			g("vllm:kv_cache_usage_perc", "gauge", 0.5+0.3*phase),
			g("vllm:prefix_cache_hits_total", "counter", hits),
			g("vllm:prefix_cache_queries_total", "counter", queries),
			{TimeNS: ts, Target: target, Metric: "vllm:time_to_first_token_seconds", Type: "histogram", Part: "sum", Bound: math.NaN(), Value: ttftSum},
			{TimeNS: ts, Target: target, Metric: "vllm:time_to_first_token_seconds", Type: "histogram", Part: "count", Bound: math.NaN(), Value: ttftCount},
		})
		var gs []record.GPUSample
		for gpu := range int32(2) {
			gs = append(gs, record.GPUSample{TimeNS: ts, Source: "nvml", GPU: gpu, Name: "synthetic GPU",
				UtilPct: 60 + 30*phase, MemUsedBytes: 40e9 + 1e9*float64(gpu), MemTotalBytes: 80e9,
				PowerW: 400 + 100*phase + 10*float64(gpu), EnergyJ: float64(k) * 400, TempC: 60, SMClockMHz: 1900})
		}
		gw.Write(gs)
	}
}
