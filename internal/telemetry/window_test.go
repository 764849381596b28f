package telemetry

import (
	"fmt"
	"testing"

	"github.com/reprise-bench/reprise/engine/record"
)

// scrapeOf is one successful scrape of target "t" at timeNS, as the Scraper
// hands it over: the page's samples and reprise's own three, all at the
// page's time.
func scrapeOf(t *testing.T, timeNS int64, page string) []record.MetricSample {
	t.Helper()
	s := parse(t, []byte(page), timeNS)
	for i := range s {
		s[i].Target = "t"
	}
	n := float64(len(s))
	return append(s,
		record.MetricSample{TimeNS: timeNS, Target: "t", Metric: MetricScrapeUp, Type: "gauge", Value: 1},
		record.MetricSample{TimeNS: timeNS, Target: "t", Metric: MetricScrapeSamples, Type: "gauge", Value: n},
	)
}

// vllmPage renders the counters and the TTFT histogram a vLLM page has;
// a negative value leaves that family out, as a server does before the
// series' first increment.
func vllmPage(prompt, gen, ttftCount float64) string {
	p := ""
	if prompt >= 0 {
		p += fmt.Sprintf("# TYPE vllm:prompt_tokens_total counter\nvllm:prompt_tokens_total{model_name=\"m\"} %g\n", prompt)
	}
	if gen >= 0 {
		p += fmt.Sprintf("# TYPE vllm:generation_tokens_total counter\nvllm:generation_tokens_total{model_name=\"m\"} %g\n", gen)
	}
	if ttftCount >= 0 {
		p += fmt.Sprintf("# TYPE vllm:time_to_first_token_seconds histogram\n"+
			"vllm:time_to_first_token_seconds_bucket{model_name=\"m\",le=\"0.1\"} %g\n"+
			"vllm:time_to_first_token_seconds_bucket{model_name=\"m\",le=\"+Inf\"} %g\n"+
			"vllm:time_to_first_token_seconds_sum{model_name=\"m\"} %g\n"+
			"vllm:time_to_first_token_seconds_count{model_name=\"m\"} %g\n", ttftCount, ttftCount, ttftCount*0.05, ttftCount)
	}
	return p + "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name=\"m\"} 0\n"
}

// TestSummarizeCountsTheWholeWindow: the server's totals over a run are
// measured from the scrape before the first send to the final scrape after
// the last response, and a series the pre-run scrape did not have (it
// appears at its first increment) starts from 0.
func TestSummarizeCountsTheWholeWindow(t *testing.T) {
	const start, end = 100, 1000 // first send, last response end
	for _, tc := range []struct {
		name     string
		scrapes  map[int64]string
		prompt   float64 // want
		gen      float64
		ttft     float64
		baseline bool
	}{
		{
			// Server up for a while: the pre-run scrape is the baseline,
			// the final scrape (after the last response) the end.
			name: "warm server",
			scrapes: map[int64]string{
				50: vllmPage(5000, 700, 40), 500: vllmPage(6000, 800, 45), 1010: vllmPage(7000, 900, 50),
			},
			prompt: 2000, gen: 200, ttft: 10, baseline: true,
		},
		{
			// Generation tokens and the TTFT histogram appear mid-run (a
			// lazily created series): they count from 0, not from 300/3.
			name: "series first seen mid-run",
			scrapes: map[int64]string{
				50: vllmPage(0, -1, -1), 500: vllmPage(600, 300, 3), 1010: vllmPage(2000, 900, 6),
			},
			prompt: 2000, gen: 900, ttft: 6, baseline: true,
		},
		{
			// The same, seen only by the final scrape.
			name:    "series first seen by the final scrape",
			scrapes: map[int64]string{50: vllmPage(-1, -1, -1), 1010: vllmPage(2000, 900, 6)},
			prompt:  2000, gen: 900, ttft: 6, baseline: true,
		},
		{
			// A restart mid-run: the series vanish from a successful page
			// and come back from 0, even above their old value.
			name: "restart",
			scrapes: map[int64]string{
				50: vllmPage(100, 10, 1), 400: vllmPage(150, 20, 2), 600: vllmPage(-1, -1, -1), 1010: vllmPage(500, 400, 9),
			},
			prompt: 50 + 500, gen: 10 + 400, ttft: 1 + 9, baseline: true,
		},
		{
			// A restart seen only as a decrease.
			name: "counter reset",
			scrapes: map[int64]string{
				50: vllmPage(100, 10, 4), 400: vllmPage(150, 20, 5), 1010: vllmPage(30, 5, 2),
			},
			prompt: 50 + 30, gen: 10 + 5, ttft: 1 + 2, baseline: true,
		},
		{
			// No scrape succeeded before the first send: the first value
			// seen is the baseline, and the summary says there was none.
			name:    "no baseline",
			scrapes: map[int64]string{500: vllmPage(5000, 700, 40), 1010: vllmPage(7000, 900, 50)},
			prompt:  2000, gen: 200, ttft: 10, baseline: false,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			acc := NewAccumulator()
			for _, at := range []int64{50, 400, 500, 600, 1010} {
				if p, ok := tc.scrapes[at]; ok {
					acc.Add(scrapeOf(t, at, p))
				}
			}
			s := acc.Summarize(start, end)[0]
			if s.PromptTokens == nil || *s.PromptTokens != tc.prompt {
				t.Errorf("prompt tokens %v, want %v", ptr(s.PromptTokens), tc.prompt)
			}
			if s.GenerationTokens == nil || *s.GenerationTokens != tc.gen {
				t.Errorf("generation tokens %v, want %v", ptr(s.GenerationTokens), tc.gen)
			}
			if s.TTFT == nil || s.TTFT.Count != tc.ttft {
				t.Errorf("TTFT %+v, want count %v", s.TTFT, tc.ttft)
			}
			if s.NoBaseline == tc.baseline {
				t.Errorf("no_baseline %v, want %v", s.NoBaseline, !tc.baseline)
			}
		})
	}
}

func ptr(p *float64) any {
	if p == nil {
		return "nil"
	}
	return *p
}

// Files written before the synthetic series shared the page's time hold
// them one scrape apart from the page: the two halves must still read as
// one successful scrape, not as a page followed by an empty one (which
// would look like a restart).
func TestSummarizeSplitScrape(t *testing.T) {
	acc := NewAccumulator()
	var all []record.MetricSample
	for _, at := range []int64{50, 500, 1010} {
		s := scrapeOf(t, at, vllmPage(float64(at), float64(at), float64(at)))
		up := s[len(s)-2:]
		for i := range up {
			up[i].TimeNS = at + 3 // the old scraper stamped them after the page
		}
		all = append(all, s...)
	}
	acc.AddAll(all)
	s := acc.Summarize(100, 1000)[0]
	if s.PromptTokens == nil || *s.PromptTokens != 960 {
		t.Errorf("prompt tokens %v, want 960", ptr(s.PromptTokens))
	}
	if s.Scrapes != 3 || s.NoBaseline {
		t.Errorf("scrapes %d, no_baseline %v", s.Scrapes, s.NoBaseline)
	}
}

// llamaPage renders current llama-server's token counters: prompt_tokens_total
// counts only the prompt tokens it evaluated, prompt_tokens_cached_total the
// ones it reused from its cache (a negative cached leaves it out, as older
// builds do).
func llamaPage(uncached, cached, predicted float64) string {
	p := fmt.Sprintf("# HELP llamacpp:prompt_tokens_total Number of prompt tokens processed, excluding cached tokens\n"+
		"# TYPE llamacpp:prompt_tokens_total counter\nllamacpp:prompt_tokens_total %g\n", uncached)
	if cached >= 0 {
		p += fmt.Sprintf("# HELP llamacpp:prompt_tokens_cached_total Number of prompt tokens reused from the cache\n"+
			"# TYPE llamacpp:prompt_tokens_cached_total counter\nllamacpp:prompt_tokens_cached_total %g\n", cached)
	}
	return p + fmt.Sprintf("# TYPE llamacpp:tokens_predicted_total counter\nllamacpp:tokens_predicted_total %g\n"+
		"# TYPE llamacpp:requests_processing gauge\nllamacpp:requests_processing 1\n", predicted)
}

// TestSummarizeLlamaCppCachedTokens: with current llama-server, the prompt
// tokens of the run are the evaluated plus the cached ones, and the cached
// share is the server's prefix-cache hit ratio; an older build without the
// cached counter still gives its (evaluated) prompt tokens.
func TestSummarizeLlamaCppCachedTokens(t *testing.T) {
	acc := NewAccumulator()
	acc.Add(scrapeOf(t, 50, llamaPage(1000, 5000, 300)))
	acc.Add(scrapeOf(t, 500, llamaPage(1100, 5600, 400)))
	acc.Add(scrapeOf(t, 1010, llamaPage(1200, 6800, 500)))
	s := acc.Summarize(100, 1100)[0]
	// Δ evaluated 200 + Δ cached 1800 over 1 µs.
	if s.Family != "llamacpp" || s.PromptTokens == nil || *s.PromptTokens != 2000 {
		t.Fatalf("family %q prompt tokens %v, want llamacpp and 2000", s.Family, ptr(s.PromptTokens))
	}
	if s.PromptTokensPerSec == nil || *s.PromptTokensPerSec != 2000/1e-6 {
		t.Errorf("prompt tokens/s %v, want %v", ptr(s.PromptTokensPerSec), 2000/1e-6)
	}
	if s.CachedPromptTokens == nil || *s.CachedPromptTokens != 1800 {
		t.Errorf("cached prompt tokens %v, want 1800", ptr(s.CachedPromptTokens))
	}
	if s.PrefixCacheHitRatio == nil || *s.PrefixCacheHitRatio != 0.9 {
		t.Errorf("prefix-cache hit ratio %v, want 0.9", ptr(s.PrefixCacheHitRatio))
	}
	if s.GenerationTokens == nil || *s.GenerationTokens != 200 {
		t.Errorf("generation tokens %v, want 200", ptr(s.GenerationTokens))
	}

	old := NewAccumulator()
	old.Add(scrapeOf(t, 50, llamaPage(1000, -1, 300)))
	old.Add(scrapeOf(t, 1010, llamaPage(1200, -1, 500)))
	s = old.Summarize(100, 1100)[0]
	if s.PromptTokens == nil || *s.PromptTokens != 200 || s.PrefixCacheHitRatio != nil || s.CachedPromptTokens != nil {
		t.Errorf("older llama-server: prompt tokens %v, hit ratio %v, cached %v; want 200, none, none",
			ptr(s.PromptTokens), ptr(s.PrefixCacheHitRatio), ptr(s.CachedPromptTokens))
	}
}
