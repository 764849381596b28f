package livemetrics_test

import (
	"fmt"

	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/internal/livemetrics"
)

// A run's metrics count its finished records; a scrape of the server
// (or Gather, here) reads them.
func Example() {
	m := livemetrics.New(livemetrics.Config{RunID: "4b87b0a6e95ad9d0", Streaming: true,
		Targets: []livemetrics.Target{{URL: "http://gpu-box:8000", Model: "Qwen/Qwen3-8B"}}})
	m.Observe([]record.Request{{IntendedNS: 1, FirstTokenNS: 2, TTFTNS: 42e6, E2ENS: 90e6, InputTokens: 512, OutputTokens: 127,
		ServerCompletionTokens: 128, OutputTokensSource: record.TokensServer}})
	fams, err := m.Gatherer().Gather()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range fams {
		switch f.GetName() {
		case livemetrics.NameTTFT:
			h := f.GetMetric()[0].GetHistogram()
			fmt.Printf("%s: %d, sum %.3f s\n", f.GetName(), h.GetSampleCount(), h.GetSampleSum())
		case livemetrics.NameOutputTokens:
			fmt.Printf("%s: %v\n", f.GetName(), f.GetMetric()[0].GetCounter().GetValue())
		}
	}
	// Output:
	// reprise_output_tokens_total: 128
	// reprise_time_to_first_token_seconds: 1, sum 0.042 s
}
