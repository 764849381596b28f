package telemetry

import (
	"fmt"
	"testing"

	"github.com/reprise-bench/reprise/internal/record"
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
