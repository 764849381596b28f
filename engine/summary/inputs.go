package summary

import (
	"fmt"
	"math"
	"strings"

	"github.com/reprise-bench/reprise/engine/record"
)

func (s *Sent) add(r *record.Request) {
	if r.SentNS == 0 || r.ErrorKind == record.ErrNotDelivered {
		return
	}
	s.Requests++
	if r.ServerPromptTokens >= 0 {
		s.PromptTokens += int64(r.ServerPromptTokens)
	} else {
		s.PromptTokens += int64(r.InputTokens)
	}
	if r.ServerCompletionTokens >= 0 {
		s.OutputTokens += int64(r.ServerCompletionTokens)
	} else {
		s.OutputTokens += int64(r.OutputTokens) + int64(max(r.ReasoningTokens, 0))
	}
	if !r.OK() || r.PlannedCancel() {
		s.Unfinished++
	}
}

// The thresholds of [Summary.Comparability].
const (
	// SharedServerExcess is the share by which a server's count may pass
	// what the run sent before the run is "shared server": 5 % of
	// requests (and at least SharedServerMinRequests), 10 % of tokens
	// (and at least SharedServerMinTokens), for the counts' timing and
	// the tokens a chat template adds where the client counted.
	SharedServerRequestExcess = 0.05
	SharedServerTokenExcess   = 0.10
	SharedServerMinRequests   = 3
	SharedServerMinTokens     = 256
	// WarmCacheRatio is the share of the fresh prompts' tokens the server
	// must say it served from its cache for the cache to be warm before
	// the run; WarmCacheMinRequests the fresh requests it takes.
	WarmCacheRatio       = 0.5
	WarmCacheMinRequests = 2
)

// ServerCheck is one server's counters over the run beside what the run
// sent it. Counts the server does not export are nil.
type ServerCheck struct {
	// Target is the server's /metrics URL.
	Target string `json:"target"`
	// Shared reports that the server counted more than the run sent: a
	// second client shared it, and its latencies are not this load's.
	Shared                   bool     `json:"shared"`
	RequestsSent             int64    `json:"requests_sent"`
	RequestsServed           *float64 `json:"requests_served,omitempty"`
	PromptTokensSent         int64    `json:"prompt_tokens_sent"`
	PromptTokensServed       *float64 `json:"prompt_tokens_served,omitempty"`
	GenerationTokensReceived int64    `json:"generation_tokens_received"`
	GenerationTokensServed   *float64 `json:"generation_tokens_served,omitempty"`
}

// CacheCheck is the prefix cache's state before the run, judged from the
// fresh prompts.
type CacheCheck struct {
	// Warm reports that the server served at least WarmCacheRatio of the
	// fresh prompts' tokens from its cache: an earlier run (or another
	// client) left them there, and the cache numbers are not this load's.
	Warm               bool    `json:"warm"`
	FreshRequests      int64   `json:"fresh_requests"`
	FreshPromptTokens  int64   `json:"fresh_prompt_tokens"`
	FreshCachedTokens  int64   `json:"fresh_cached_tokens"`
	FreshCachedRatio   float64 `json:"fresh_cached_ratio"`
	ExpectedCacheRatio float64 `json:"expected_cache_ratio"`
}

// Comparability is what the run can tell of whether its numbers measure
// its own load alone: the servers' counters against what it sent, and the
// prefix cache's state before it. Warnings say each problem found, with
// its numbers and what to do; none means nothing was found (or nothing
// could be checked: Servers and Cache say what was).
type Comparability struct {
	Servers  []ServerCheck `json:"servers,omitempty"`
	Cache    *CacheCheck   `json:"prefix_cache,omitempty"`
	Warnings []string      `json:"warnings"`
}

// Comparability checks the run's inputs: each scraped server's request
// and token counters over the run (telemetry.servers) against what the
// run sent that server (every target with that /metrics page; all of the
// run for a page that is no target's), and the server's cached tokens on
// the fresh prompts. A server's count above what was sent by more than
// the Shared* margins makes it a shared server; a server that served at
// least WarmCacheRatio of the fresh prompts' tokens from its cache had a
// warm cache before the run.
func (s *Summary) Comparability() Comparability {
	c := Comparability{Warnings: []string{}}
	if s.Telemetry != nil {
		for _, sv := range s.Telemetry.Servers {
			sc := s.serverCheck(sv)
			c.Servers = append(c.Servers, sc)
			if sc.Shared {
				c.Warnings = append(c.Warnings, sc.warning())
			}
		}
	}
	if f := s.Fresh; f.Requests > 0 && f.PromptTokens > 0 {
		cc := &CacheCheck{FreshRequests: f.Requests, FreshPromptTokens: f.PromptTokens, FreshCachedTokens: f.CachedTokens,
			FreshCachedRatio: float64(f.CachedTokens) / float64(f.PromptTokens)}
		if s.TotalISL > 0 {
			cc.ExpectedCacheRatio = float64(s.ExpectedCachedTokens) / float64(s.TotalISL)
		}
		cc.Warm = f.Requests >= WarmCacheMinRequests && cc.FreshCachedRatio >= WarmCacheRatio
		c.Cache = cc
		if cc.Warm {
			c.Warnings = append(c.Warnings, fmt.Sprintf("warm prefix cache: the server served %d of the %d prompt tokens of %d fresh prompts (%.2f) from its cache before this run had sent them; "+
				"cache fidelity and TTFT are not this trace's (trace expects a hit ratio of %.2f): reset the cache before the run (sweep --before-point), send new prompts (--prompt-seed), or prime each prefix first (--prime-prefixes)",
				f.CachedTokens, f.PromptTokens, f.Requests, cc.FreshCachedRatio, cc.ExpectedCacheRatio))
		}
	}
	return c
}

// serverCheck compares sv's counters with what the run sent it.
func (s *Summary) serverCheck(sv ServerSummary) ServerCheck {
	sent := s.Sent
	if len(s.Targets) > 0 {
		var mine Sent
		found := false
		for _, t := range s.Targets {
			if u, err := MetricsURL(t.Run.URL); err == nil && u == sv.Target {
				found = true
				mine.Requests += t.Sent.Requests
				mine.PromptTokens += t.Sent.PromptTokens
				mine.OutputTokens += t.Sent.OutputTokens
				mine.Unfinished += t.Sent.Unfinished
			}
		}
		if found {
			sent = mine
		}
	}
	c := ServerCheck{Target: sv.Target, RequestsSent: sent.Requests, PromptTokensSent: sent.PromptTokens,
		GenerationTokensReceived: sent.OutputTokens, RequestsServed: sv.Requests, PromptTokensServed: sv.PromptTokens,
		GenerationTokensServed: sv.GenerationTokens}
	over := func(served *float64, sent int64, share float64, least int64) bool {
		return served != nil && *served-float64(sent) >= math.Max(share*float64(sent), float64(least))
	}
	c.Shared = over(sv.Requests, sent.Requests, SharedServerRequestExcess, SharedServerMinRequests) ||
		over(sv.PromptTokens, sent.PromptTokens, SharedServerTokenExcess, SharedServerMinTokens) ||
		// A request that failed or was cancelled may have been generated
		// further than the client read: only a run without one judges by
		// the generated tokens.
		sent.Unfinished == 0 && over(sv.GenerationTokens, sent.OutputTokens, SharedServerTokenExcess, SharedServerMinTokens)
	return c
}

func (c ServerCheck) warning() string {
	var parts []string
	add := func(what string, served *float64, sent int64) {
		if served != nil {
			parts = append(parts, fmt.Sprintf("%s %s served against %d sent", fmtCount(*served), what, sent))
		}
	}
	add("requests", c.RequestsServed, c.RequestsSent)
	add("prompt tokens", c.PromptTokensServed, c.PromptTokensSent)
	if c.GenerationTokensServed != nil {
		parts = append(parts, fmt.Sprintf("%s generation tokens against %d received", fmtCount(*c.GenerationTokensServed), c.GenerationTokensReceived))
	}
	return fmt.Sprintf("shared server %s: %s; another client loaded it during the run, so its latencies and the server's own numbers are not this load's alone",
		c.Target, strings.Join(parts, ", "))
}

func fmtCount(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return fmt.Sprintf("%d", int64(v))
	}
	return fmt.Sprintf("%.1f", v)
}
