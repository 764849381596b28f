package reprise

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/engine"
	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/engine/adapter/openai"
	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/engine/summary"
	"github.com/reprise-bench/reprise/internal/mockserver"
	"github.com/reprise-bench/reprise/internal/oracle"
	"github.com/reprise-bench/reprise/replay"
	"github.com/reprise-bench/reprise/trace"
)

// memSink keeps everything in memory.
type memSink struct {
	mu     sync.Mutex
	reqs   []record.Request
	evs    []record.Event
	closed bool
}

func (m *memSink) WriteRequests(b []record.Request) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reqs = append(m.reqs, b...)
	return nil
}
func (m *memSink) WriteEvents(b []record.Event) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.evs = append(m.evs, b...)
	return nil
}
func (m *memSink) Close() error { m.closed = true; return nil }

// wordPrompts builds prompts of n words.
type wordPrompts struct{}

func (wordPrompts) Prompt(row *trace.Row, in *adapter.BuildInput) (int, int, error) {
	in.PromptText = strings.Repeat("hello ", row.InputTokens)
	return row.InputTokens, -1, nil
}

func startMock(t testing.TB, mut func(*mockserver.Config)) *mockserver.Server {
	t.Helper()
	cfg := mockserver.NewConfig()
	cfg.Addr = "127.0.0.1:0"
	cfg.TTFT = 20 * time.Millisecond
	cfg.ITL = 5 * time.Millisecond
	if mut != nil {
		mut(cfg)
	}
	srv, err := mockserver.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// closedLoop is the schedule of most tests: n requests, conc sessions in
// flight (0: none; set a rate), a second of grace.
func closedLoop(n, conc int) replay.Config {
	rc := replay.NewConfig()
	rc.Concurrency = conc
	rc.RequestCount = n
	rc.Grace = time.Second
	return rc
}

// mustPlan plans rc over rows (nil: a synthetic load).
func mustPlan(tb testing.TB, rc replay.Config, rows []trace.Row) *replay.Plan {
	tb.Helper()
	p, err := replay.NewPlan(rc, rows)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// runConfig runs plan against the mock server at url, streaming small
// synthetic requests (ISL 32, OSL 12) into sink.
// serverLog returns the mock server's oracle log once every request it
// received is logged: a client reads the end of a response just before
// the server adds its line, so reading the log right after a run can miss
// the last requests.
func serverLog(t testing.TB, srv *mockserver.Server) []mockserver.RequestLog {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.WaitIdle(ctx); err != nil {
		t.Fatalf("the mock server still has requests in flight: %v", err)
	}
	return srv.Log()
}

func mockRunConfig(url string, plan *replay.Plan, sink recordSink) runConfig {
	ec := engine.NewConfig()
	ec.BaseURL = url
	ec.Adapter = openai.Adapter{}
	ec.AdapterConfig = adapter.Config{Model: "reprise-mock", Stream: true, IncludeUsage: true, IgnoreEOS: true}
	ec.Events = true
	return runConfig{
		Engine: ec, Plan: plan, Synthetic: syntheticLengths{ISL: 32, OSL: 12, Seed: 1}, Prompts: wordPrompts{},
		Streaming: true, MaxTokensFromTrace: true, Sink: sink, Summary: summary.Options{Streaming: true},
	}
}

// TestRunAgainstMockServer: a closed-loop synthetic run at 100 concurrent
// streams; every request is recorded, succeeds, carries the server's token
// counts, and its timeline is causally consistent with the server's oracle
// log (no client stamp precedes the time the server's write was due).
// The size of the timing error is measured by BenchmarkTTFTError: tests
// never assert on wall-clock timing.
func TestRunAgainstMockServer(t *testing.T) {
	srv := startMock(t, nil)
	sink := &memSink{}
	res, err := runEngine(context.Background(), mockRunConfig(srv.URL(), mustPlan(t, closedLoop(200, 100), nil), sink))
	if err != nil {
		t.Fatal(err)
	}
	if !sink.closed || len(sink.reqs) != 200 {
		t.Fatalf("sink closed %v with %d records", sink.closed, len(sink.reqs))
	}
	s := res.Summary
	if s.RequestCount != 200 || s.ErrorRequestCount != 0 {
		t.Fatalf("summary %d ok %d errors %v", s.RequestCount, s.ErrorRequestCount, s.Errors)
	}
	logs := map[string]*mockserver.RequestLog{}
	for _, l := range serverLog(t, srv) {
		l := l
		logs[l.ClientRequestID] = &l
	}
	errs := checkAgainstOracle(t, sink.reqs, serverLog(t, srv))
	t.Logf("client vs server write (ms): first token p50 %v p99 %v max %v; last token p50 %v p99 %v; ITL p50 %v p99 %v; write width p99 %v",
		errs.first.P50, errs.first.P99, errs.first.Max, errs.last.P50, errs.last.P99, errs.itl.P50, errs.itl.P99, errs.width.P99)
	if len(sink.evs) == 0 {
		t.Error("no events exported")
	}
}

// TestRunNeedsPlan: the plan is the run's only source of rows and timing
// settings; without one Run refuses, naming what to build.
func TestRunNeedsPlan(t *testing.T) {
	_, err := runEngine(context.Background(), runConfig{})
	if err == nil || !strings.Contains(err.Error(), "replay.NewPlan") {
		t.Errorf("Run without a plan: %v", err)
	}
}

// TestRunSendersFromPlan: the run has as many senders as the plan says
// (replay.Config.SendersOrDefault), no more: every request names one of
// them.
func TestRunSendersFromPlan(t *testing.T) {
	srv := startMock(t, nil)
	sink := &memSink{}
	rc := closedLoop(40, 0)
	rc.RequestRate, rc.Senders = 5000, 3
	cfg := mockRunConfig(srv.URL(), mustPlan(t, rc, nil), sink)
	if _, err := runEngine(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	used := map[int32]bool{}
	for _, r := range sink.reqs {
		used[r.SenderID] = true
		if r.SenderID < 0 || r.SenderID >= 3 {
			t.Errorf("request %d ran on sender %d, want 0..2", r.RequestID, r.SenderID)
		}
	}
	if len(sink.reqs) != 40 || len(used) == 0 {
		t.Errorf("%d records on %d senders", len(sink.reqs), len(used))
	}
}

// timingErrors are distributions, in ms, of the distance between a
// client stamp and the interval in which the server wrote the event
// ([Event.StartNS, Event.TimeNS]; 0 inside it), and of |client − server|
// mean ITL; width is the first token's interval width, the oracle's own
// uncertainty. They are oracle.Compare's, which reprise selftest reports.
type timingErrors struct{ first, last, itl, width summary.Stats }

// checkAgainstOracle joins records to the server's log by X-Request-Id,
// checks counts and causality, and returns the timing errors.
func checkAgainstOracle(t testing.TB, reqs []record.Request, log []mockserver.RequestLog) timingErrors {
	t.Helper()
	e, problems := oracle.Compare(reqs, log)
	for _, p := range problems {
		t.Error(p)
	}
	return timingErrors{e.First, e.Last, e.ITL, e.Width}
}

// TestRunInterrupted: cancelling the run's context stops sending, lets
// in-flight requests run for the grace period, then cancels them; every
// sent request is recorded (as cancelled) and the sink is closed.
func TestRunInterrupted(t *testing.T) {
	srv := startMock(t, func(c *mockserver.Config) { c.TTFT = time.Millisecond; c.ITL = 50 * time.Millisecond })
	sink := &memSink{}
	rc := closedLoop(100, 4)
	rc.Grace = 100 * time.Millisecond
	cfg := mockRunConfig(srv.URL(), mustPlan(t, rc, nil), sink)
	cfg.Synthetic = syntheticLengths{ISL: 8, OSL: 200, Seed: 1} // 10 s per request
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(time.Second, cancel)
	res, err := runEngine(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted || !res.Summary.Run.Cancelled {
		t.Error("run not reported as interrupted")
	}
	// No request can finish (10 s each): the rows are exactly the
	// requests in flight, at most 4, all cancelled.
	if !sink.closed || len(sink.reqs) == 0 || len(sink.reqs) > 4 {
		t.Fatalf("sink closed %v, %d rows; want the (up to 4) requests in flight", sink.closed, len(sink.reqs))
	}
	for _, r := range sink.reqs {
		if r.ErrorKind != record.ErrCancelled {
			t.Errorf("request %d: %s (%s)", r.RequestID, r.ErrorKind, r.ErrorMessage)
		}
	}
	if res.Summary.ErrorsByKind[record.ErrCancelled] != len(sink.reqs) {
		t.Errorf("summary errors %v", res.Summary.ErrorsByKind)
	}
}

// TestOneClock: the scheduler's times (intended, dispatched) and the
// engine's (sent, headers, end) are read on one clock, the engine's, which
// here started well before the run: for every request the dispatcher's
// stamp comes first and the send follows it.
func TestOneClock(t *testing.T) {
	srv := startMock(t, func(c *mockserver.Config) { c.TTFT, c.ITL = time.Millisecond, 100*time.Microsecond })
	sink := &memSink{}
	cfg := mockRunConfig(srv.URL(), mustPlan(t, closedLoop(60, 4), nil), sink)
	start := time.Now()
	cfg.Engine.Clock = replay.ClockAt(start)
	res, err := runEngine(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(sink.reqs) != 60 || res.Summary.ErrorRequestCount != 0 {
		t.Fatalf("%d records, %d errors", len(sink.reqs), res.Summary.ErrorRequestCount)
	}
	for _, r := range sink.reqs {
		if r.DispatchedNS < start.UnixNano() || r.IntendedNS > r.DispatchedNS+int64(time.Hour) {
			t.Errorf("request %d: intended %d dispatched %d before the clock's start %d", r.RequestID, r.IntendedNS, r.DispatchedNS, start.UnixNano())
		}
		if d := r.SentNS - r.DispatchedNS; d < 0 || r.SentNS > r.HeadersNS || r.HeadersNS > r.EndNS {
			t.Errorf("request %d: dispatched %d sent %d (sent − dispatched %d) headers %d end %d: not one clock",
				r.RequestID, r.DispatchedNS, r.SentNS, d, r.HeadersNS, r.EndNS)
		}
	}
}

// slowPrompts builds like wordPrompts, taking a millisecond per prompt.
type slowPrompts struct{}

func (slowPrompts) Prompt(row *trace.Row, in *adapter.BuildInput) (int, int, error) {
	time.Sleep(time.Millisecond)
	return wordPrompts{}.Prompt(row, in)
}

// TestRunPrefillsLookahead: when a trace's first requests are all due at
// once, the run fills its lookahead before its time zero, so none of them
// is built on the send path (without the wait, 2 builders at 1 ms per
// prompt were behind for most of them).
func TestRunPrefillsLookahead(t *testing.T) {
	srv := startMock(t, func(c *mockserver.Config) { c.TTFT = time.Millisecond; c.ITL = time.Millisecond })
	sink := &memSink{}
	var rows []trace.Row
	for i := range 40 {
		rows = append(rows, trace.Row{Index: int64(i), Line: int64(i + 1), HasOffset: true,
			InputTokens: 8, OutputTokens: 2, ParentID: -1, RequestID: -1})
	}
	cfg := mockRunConfig(srv.URL(), mustPlan(t, replay.NewConfig(), rows), sink)
	cfg.Prompts = slowPrompts{}
	res, err := runEngine(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(sink.reqs) != 40 || res.Summary.ErrorRequestCount != 0 {
		t.Fatalf("%d rows, %d errors: %v", len(sink.reqs), res.Summary.ErrorRequestCount, res.Summary.Errors)
	}
	if res.InlineBuilds != 0 {
		t.Errorf("%d of 40 requests built on the send path; the lookahead should have been filled first", res.InlineBuilds)
	}
}
