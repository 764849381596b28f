package summary

import (
	"strings"
	"testing"

	"github.com/reprise-bench/reprise/engine/record"
)

func f64(v float64) *float64 { return &v }

// testRecords sends 13 requests (10 ok, 2 failed, 1 warmup) of 100 prompt tokens
// (the failed ones: 0 known); the server's counters are set against that.
func TestComparabilitySharedServer(t *testing.T) {
	for _, c := range []struct {
		name             string
		requests, prompt *float64
		shared           bool
	}{
		{"alone", f64(10), f64(1000), false},
		{"alone, counters lag by one request", f64(9), f64(900), false},
		// 5,603 served against 13 sent: the case.
		{"second client", f64(5603), f64(560300), true},
		// llama.cpp counts no requests: the prompt tokens tell.
		{"second client, tokens only", nil, f64(2000), true},
		{"no counters", nil, nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := Summarize(testRecords(), RunInfo{URL: "http://h:1/v1"}, Options{Streaming: true})
			s.AttachTelemetry(&Telemetry{Servers: []ServerSummary{{Target: "http://h:1/metrics", Requests: c.requests, PromptTokens: c.prompt}}})
			cmp := s.Comparability()
			if len(cmp.Servers) != 1 {
				t.Fatalf("servers %+v", cmp.Servers)
			}
			sc := cmp.Servers[0]
			if sc.Shared != c.shared || sc.RequestsSent != 13 || sc.PromptTokensSent != 1000 {
				t.Errorf("shared %v sent %d requests, %d prompt tokens; want %v, 13, 1000", sc.Shared, sc.RequestsSent, sc.PromptTokensSent, c.shared)
			}
			warned := len(cmp.Warnings) == 1 && strings.HasPrefix(cmp.Warnings[0], "shared server http://h:1/metrics: ")
			if warned != c.shared {
				t.Errorf("warnings %q", cmp.Warnings)
			}
			if c.name == "second client" && !strings.Contains(cmp.Warnings[0], "5603 requests served against 13 sent") {
				t.Errorf("warning %q does not give both counts", cmp.Warnings[0])
			}
			var b strings.Builder
			if err := s.WriteTable(&b); err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(b.String(), "WARNING: shared server"); got != c.shared {
				t.Errorf("printed table has the warning: %v, want %v\n%s", got, c.shared, b.String())
			}
		})
	}
}

func TestComparabilityWarmCache(t *testing.T) {
	fresh := func(cached int32) []record.Request {
		rs := testRecords()
		for i := range rs[:10] {
			rs[i].ExpectedCachedTokens = 0
			rs[i].ServerCachedTokens = cached
		}
		return rs
	}
	for _, c := range []struct {
		name   string
		cached int32
		warm   bool
	}{
		{"cold", 0, false},
		{"a chat template's first block", 16, false},
		{"warm", 96, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := Summarize(fresh(c.cached), RunInfo{}, Options{Streaming: true})
			cmp := s.Comparability()
			if cmp.Cache == nil || cmp.Cache.Warm != c.warm || cmp.Cache.FreshRequests != 10 || cmp.Cache.FreshPromptTokens != 1000 {
				t.Fatalf("cache %+v; want warm %v over 10 fresh requests of 1000 tokens", cmp.Cache, c.warm)
			}
			if c.warm && (len(cmp.Warnings) != 1 || !strings.Contains(cmp.Warnings[0], "--prime-prefixes") ||
				!strings.Contains(cmp.Warnings[0], "960 of the 1000 prompt tokens of 10 fresh prompts")) {
				t.Errorf("warnings %q", cmp.Warnings)
			}
		})
	}
}

// A fan-out run: each target's server is checked against what was sent
// to it, and the client-against-server view pairs each with its own.
func TestComparabilityPerTarget(t *testing.T) {
	rs := testRecords()
	var all []record.Request
	for _, r := range rs {
		for tg := range 2 {
			r.Target = int32(tg)
			if tg == 1 {
				r.TTFTNS += 100e6
			}
			all = append(all, r)
		}
	}
	opts := Options{Streaming: true, Targets: []TargetInfo{{URL: "http://a:1/v1"}, {URL: "http://b:2/v1"}}}
	s := Summarize(all, RunInfo{URL: "http://a:1/v1"}, opts)
	s.AttachTelemetry(&Telemetry{Servers: []ServerSummary{
		{Target: "http://a:1/metrics", Requests: f64(12), TTFT: &HistogramStats{Count: 10, MeanMS: 24.5}},
		{Target: "http://b:2/metrics", Requests: f64(40), TTFT: &HistogramStats{Count: 10, MeanMS: 124.5}},
	}})
	cmp := s.Comparability()
	if len(cmp.Servers) != 2 || cmp.Servers[0].Shared || !cmp.Servers[1].Shared || cmp.Servers[1].RequestsSent != 13 {
		t.Errorf("servers %+v; want b alone shared, 13 sent to each", cmp.Servers)
	}
	for tg, sub := range s.Targets {
		if sub.Telemetry == nil || len(sub.Telemetry.Servers) != 1 {
			t.Fatalf("target %d telemetry %+v", tg, sub.Telemetry)
		}
		pairs := sub.clientVsServer(sub.Telemetry.Servers[0])
		if len(pairs) == 0 || pairs[0].client-pairs[0].server != 0 {
			t.Errorf("target %d: client vs server %+v; want its own client mean against its own server", tg, pairs)
		}
	}
	if got := s.clientOf(s.Telemetry.Servers[1]); got != s.Targets[1] {
		t.Errorf("server b pairs with %v, want target 1", got.Run.URL)
	}
}
