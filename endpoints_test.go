package reprise

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/engine/adapter/openai"
	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/internal/mockserver"
)

// TestResponsesAgainstMockServer replays a synthetic load over the
// Responses API, streamed and not, against the mock server reasoning for
// its first 3 tokens: every request succeeds; the client's token count
// (reasoning and answer apart) equals the server's usage and the oracle
// log; TTFT is the first reasoning delta, not the envelopes sent at
// admission, and TTFO the first answer delta.
func TestResponsesAgainstMockServer(t *testing.T) {
	for _, stream := range []bool{true, false} {
		srv := startMock(t, func(c *mockserver.Config) { c.ReasoningTokens, c.ChatTemplateTokens = 3, 0 })
		sink := &memSink{}
		cfg := mockRunConfig(srv.URL(), mustPlan(t, closedLoop(20, 4), nil), sink)
		cfg.Engine.Adapter = openai.Adapter{Endpoint: openai.Responses}
		cfg.Engine.Counter = builtinTokenizer(t)
		cfg.Engine.AdapterConfig.Stream = stream
		cfg.Streaming = stream
		if _, err := runEngine(context.Background(), cfg); err != nil {
			t.Fatal(err)
		}
		if len(sink.reqs) != 20 {
			t.Fatalf("stream %v: %d records, want 20", stream, len(sink.reqs))
		}
		rows := eventsByRequest(sink.evs)
		logs := map[string]mockserver.RequestLog{}
		for _, l := range serverLog(t, srv) {
			logs[l.ClientRequestID] = l
		}
		if stream {
			checkAgainstOracle(t, sink.reqs, serverLog(t, srv))
		}
		for _, r := range sink.reqs {
			if !r.OK() {
				t.Fatalf("stream %v: request %d failed: %s %s", stream, r.RequestID, r.ErrorKind, r.ErrorMessage)
			}
			l := logs[strconv.FormatUint(r.RequestID, 10)]
			if l.Endpoint != "/v1/responses" || l.OutputTokens != 12 || l.ReasoningTokens != 3 {
				t.Fatalf("stream %v: server log %+v", stream, l)
			}
			if r.ServerCompletionTokens != 12 || r.ServerReasoningTokens != 3 || int(r.ServerPromptTokens) != l.PromptTokens ||
				int(r.ServerCachedTokens) != l.CachedTokens {
				t.Errorf("stream %v, request %d: server usage prompt %d cached %d completion %d reasoning %d; log %d/%d/%d/%d; client prompt %d",
					stream, r.RequestID, r.ServerPromptTokens, r.ServerCachedTokens, r.ServerCompletionTokens, r.ServerReasoningTokens,
					l.PromptTokens, l.CachedTokens, l.OutputTokens, l.ReasoningTokens, r.InputTokens)
			}
			if r.OutputTokens != 9 || r.ReasoningTokens != 3 || r.ServerMinusClientOutputTokens != 0 {
				t.Errorf("stream %v, request %d: client counted %d answer + %d reasoning tokens (server minus client %d); want 9 + 3",
					stream, r.RequestID, r.OutputTokens, r.ReasoningTokens, r.ServerMinusClientOutputTokens)
			}
			if r.FinishReason != "length" {
				t.Errorf("stream %v, request %d: finish %q, want length (response.incomplete)", stream, r.RequestID, r.FinishReason)
			}
			if !stream {
				if r.TTFTNS != 0 || r.EndNS <= r.SentNS {
					t.Errorf("non-streamed request %d: TTFT %d, E2E %d", r.RequestID, r.TTFTNS, r.E2ENS)
				}
				continue
			}
			// The two envelopes sent at admission are meta events; TTFT is
			// the first reasoning delta's read, TTFO the first answer delta's.
			evs := rows[r.RequestID]
			if len(evs) < 2 || evs[0].Kind != record.EventMeta || evs[1].Kind != record.EventMeta || r.ContentEvents != 12 {
				t.Fatalf("request %d: %d content events, first rows %+v; want 12 and two meta envelopes first", r.RequestID, r.ContentEvents, evs[:min(len(evs), 2)])
			}
			var firstReason, firstAnswer int64
			for _, ev := range evs {
				if ev.Kind == record.EventReasoning && firstReason == 0 {
					firstReason = ev.TimeNS
				}
				if ev.Kind == record.EventContent && firstAnswer == 0 {
					firstAnswer = ev.TimeNS
				}
			}
			if r.FirstTokenNS != firstReason || r.FirstOutputTokenNS != firstAnswer || r.TTFONS != firstAnswer-r.SentNS {
				t.Errorf("request %d: first token %d, first answer token %d, TTFO %d; event rows: first reasoning %d, first answer %d",
					r.RequestID, r.FirstTokenNS, r.FirstOutputTokenNS, r.TTFONS, firstReason, firstAnswer)
			}
		}
	}
}

// runNative replays a synthetic load (isl, osl) with o's endpoint against
// srv through Run and returns the records.
func runNative(t *testing.T, srv *mockserver.Server, mut func(*Options), isl, osl, n int) (*Result, []record.Request) {
	t.Helper()
	o := NewOptions()
	o.URL, o.Model = srv.URL(), mockserver.DefaultModel
	o.Synthetic = SyntheticLoad{ISL: float64(isl), OSL: float64(osl)}
	o.Replay.Concurrency, o.Replay.RequestCount = 2, n
	o.Output.Dir = filepath.Join(t.TempDir(), "run")
	o.Telemetry.EndpointMetrics = false
	if mut != nil {
		mut(&o)
	}
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	rd, err := arrowio.Open(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	var reqs []record.Request
	for r, err := range rd.Requests() {
		if err != nil {
			t.Fatal(err)
		}
		reqs = append(reqs, r)
	}
	return res, reqs
}

// TestRunResponsesEndpoint: `--endpoint responses` through Run: exact
// token accounting, the prompt the client built is the prompt the server
// counted, every output token is counted by both.
func TestRunResponsesEndpoint(t *testing.T) {
	srv := startMock(t, func(c *mockserver.Config) { c.ChatTemplateTokens, c.TTFT, c.ITL = 0, time.Millisecond, 0 })
	res, reqs := runNative(t, srv, func(o *Options) { o.Endpoint = "responses" }, 24, 5, 8)
	if s := res.Summary; s.RequestCount != 8 || s.ErrorRequestCount != 0 || s.TotalOSL != 40 || s.TotalISL != 8*24 {
		t.Fatalf("summary: %d requests, %d failed, ISL %d, OSL %d; want 8, 0, 192, 40", s.RequestCount, s.ErrorRequestCount, s.TotalISL, s.TotalOSL)
	}
	for _, r := range reqs {
		if r.InputTokens != 24 || r.ServerPromptTokens != 24 || r.ServerCompletionTokens != 5 || r.ServerMinusClientOutputTokens != 0 {
			t.Errorf("request %d: client ISL %d, server prompt %d, server output %d, server minus client %d; want 24, 24, 5, 0",
				r.RequestID, r.InputTokens, r.ServerPromptTokens, r.ServerCompletionTokens, r.ServerMinusClientOutputTokens)
		}
	}
	for _, l := range serverLog(t, srv) {
		if l.Endpoint != "/v1/responses" {
			t.Fatalf("the server saw %s", l.Endpoint)
		}
	}
}

// TestRunRetrievalEndpoints replays a synthetic load against the mock
// server's embeddings and rankings endpoints through Run: every request
// succeeds with exact token accounting (the client's count of the batch,
// for rankings every (query, passage) pair, equals the server's usage or,
// where the API reports none, its oracle log), never streams, has no
// output tokens and no TTFT, and the summary reports inputs per second.
func TestRunRetrievalEndpoints(t *testing.T) {
	srv := startMock(t, func(c *mockserver.Config) { c.TTFT, c.ITL = time.Millisecond, 0 })
	const isl, batch, query, n = 12, 3, 5, 4
	for _, ep := range []string{"embeddings", "nim-embeddings", "rerank-tei", "rerank-cohere", "ranking-nim", "rerank-vllm", "score-vllm"} {
		srv.ResetLog()
		res, reqs := runNative(t, srv, func(o *Options) {
			o.Endpoint, o.BatchSize, o.QueryTokens = ep, batch, query
		}, isl, 1, n)
		want := batch * isl // embeddings: every input
		if ep != "embeddings" && ep != "nim-embeddings" {
			want = batch * (query + isl) // every (query, passage) pair
		}
		s := res.Summary
		if s.RequestCount != n || s.ErrorRequestCount != 0 {
			t.Fatalf("%s: %d ok, %d failed: %v", ep, s.RequestCount, s.ErrorRequestCount, s.Errors)
		}
		if s.Run.Streaming || s.Run.InputsPerRequest != batch || s.InputThroughput <= 0 || s.TotalOSL != 0 || s.Metrics["time_to_first_token"] != nil {
			t.Errorf("%s: summary streaming %v, inputs per request %d, input throughput %v, OSL %d, TTFT %v",
				ep, s.Run.Streaming, s.Run.InputsPerRequest, s.InputThroughput, s.TotalOSL, s.Metrics["time_to_first_token"])
		}
		logs := map[string]mockserver.RequestLog{}
		for _, l := range serverLog(t, srv) {
			logs[l.ClientRequestID] = l
			if l.Stream {
				t.Errorf("%s: a streamed request", ep)
			}
		}
		for _, r := range reqs {
			l := logs[strconv.FormatUint(r.RequestID, 10)]
			reports := ep != "rerank-tei" && ep != "ranking-nim"
			if int(r.InputTokens) != want || l.PromptTokens != want || (reports && int(r.ServerPromptTokens) != want) || (!reports && r.ServerPromptTokens != -1) {
				t.Errorf("%s, request %d: client %d tokens, server usage %d, server log %d; want %d", ep, r.RequestID, r.InputTokens, r.ServerPromptTokens, l.PromptTokens, want)
			}
			if r.OutputTokens != 0 || r.TTFTNS != 0 || r.E2ENS <= 0 {
				t.Errorf("%s, request %d: output tokens %d, TTFT %d, E2E %d", ep, r.RequestID, r.OutputTokens, r.TTFTNS, r.E2ENS)
			}
		}
	}
}

// TestRunGenerateEndpoints replays a synthetic load against the mock
// server's SGLang /generate and TGI /generate_stream (and /generate)
// through Run, streamed and not: every request succeeds, and the client's
// prompt and output counts equal the server's usage and oracle log.
func TestRunGenerateEndpoints(t *testing.T) {
	srv := startMock(t, func(c *mockserver.Config) { c.TTFT, c.ITL = time.Millisecond, 0 })
	for _, ep := range []string{"sglang", "tgi"} {
		for _, stream := range []bool{true, false} {
			srv.ResetLog()
			res, reqs := runNative(t, srv, func(o *Options) { o.Endpoint, o.Streaming = ep, stream }, 20, 6, 4)
			if s := res.Summary; s.RequestCount != 4 || s.ErrorRequestCount != 0 {
				t.Fatalf("%s stream=%v: %d ok, %d failed: %v", ep, stream, s.RequestCount, s.ErrorRequestCount, s.Errors)
			}
			logs := map[string]mockserver.RequestLog{}
			for _, l := range serverLog(t, srv) {
				logs[l.ClientRequestID] = l
			}
			for _, r := range reqs {
				l := logs[strconv.FormatUint(r.RequestID, 10)]
				if l.Stream != stream || l.PromptTokens != 20 || int(r.InputTokens) != 20 {
					t.Errorf("%s stream=%v, request %d: server log %+v, client prompt %d", ep, stream, r.RequestID, l, r.InputTokens)
				}
				// TGI has no ignore_eos: its lengths are the server's draw.
				if int(r.ServerCompletionTokens) != l.OutputTokens || r.ServerMinusClientOutputTokens != 0 || (ep == "sglang" && l.OutputTokens != 6) {
					t.Errorf("%s stream=%v, request %d: server output %d (log %d), server minus client %d",
						ep, stream, r.RequestID, r.ServerCompletionTokens, l.OutputTokens, r.ServerMinusClientOutputTokens)
				}
				if stream && int(r.ContentEvents) != l.OutputTokens {
					t.Errorf("%s, request %d: %d content events for %d tokens", ep, r.RequestID, r.ContentEvents, l.OutputTokens)
				}
				prompt := int(r.ServerPromptTokens)
				if (ep == "sglang" || stream) && prompt != 20 {
					t.Errorf("%s stream=%v, request %d: server prompt tokens %d, want 20", ep, stream, r.RequestID, prompt)
				}
			}
		}
	}
}

// TestRunTemplateEndpoint: `--endpoint FILE.json` with the shipped chat
// template replays against the mock server with the native adapter's
// exact token accounting.
func TestRunTemplateEndpoint(t *testing.T) {
	srv := startMock(t, func(c *mockserver.Config) {
		c.ChatTemplateTokens, c.TTFT, c.ITL, c.ReasoningTokens = 0, time.Millisecond, 0, 2
	})
	tpl := filepath.Join("engine", "adapter", "openai", "templates", "openai-chat.json")
	res, reqs := runNative(t, srv, func(o *Options) { o.Endpoint = tpl }, 24, 5, 6)
	if s := res.Summary; s.RequestCount != 6 || s.ErrorRequestCount != 0 || s.TotalOSL != 30 {
		t.Fatalf("summary: %d ok, %d failed, OSL %d: %v", s.RequestCount, s.ErrorRequestCount, s.TotalOSL, s.Errors)
	}
	for _, r := range reqs {
		if r.InputTokens != 24 || r.ServerPromptTokens != 24 || r.ServerCompletionTokens != 5 || r.ServerReasoningTokens != 2 ||
			r.ServerMinusClientOutputTokens != 0 || r.ContentEvents != 5 || r.TTFTNS <= 0 {
			t.Errorf("request %d: %+v", r.RequestID, r)
		}
	}
	if res.Summary.Run.Endpoint != "openai-chat-template" {
		t.Errorf("run endpoint %q", res.Summary.Run.Endpoint)
	}
}
