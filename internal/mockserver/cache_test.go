package mockserver

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// slowCache is the oracle for prefixCache: blocks are identified by the
// decimal text of their whole prefix, and the LRU is a plain slice.
type slowCache struct {
	block, slots int
	lru          []string // most recent last
}

func (c *slowCache) lookupInsert(ids []int) int {
	var keys []string
	var sb strings.Builder
	for j := 0; j+c.block <= len(ids); j += c.block {
		for _, t := range ids[j : j+c.block] {
			fmt.Fprintf(&sb, "%d,", t)
		}
		keys = append(keys, sb.String())
	}
	m := 0
	for _, k := range keys {
		if !slices.Contains(c.lru, k) {
			break
		}
		m++
	}
	for _, k := range keys {
		if i := slices.Index(c.lru, k); i >= 0 {
			c.lru = slices.Delete(c.lru, i, i+1)
		} else if len(c.lru) == c.slots {
			c.lru = c.lru[1:]
		}
		c.lru = append(c.lru, k)
	}
	return m * c.block
}

func TestPrefixCacheSemantics(t *testing.T) {
	seq := func(from, n int) []int {
		s := make([]int, n)
		for i := range s {
			s[i] = from + i
		}
		return s
	}
	c := newPrefixCache(4, 16) // 4 slots of 4 tokens
	steps := []struct {
		name string
		ids  []int
		want int
	}{
		{"cold", seq(0, 10), 0},                                    // caches blocks 0-3, 4-7 (8-9 is partial)
		{"same prompt", seq(0, 10), 8},                             // two full blocks; the partial block never counts
		{"longer prompt", seq(0, 13), 8},                           // adds block 8-11
		{"diverges in block 1", append(seq(0, 5), 99, 6, 7, 8), 4}, // leading run stops at the first miss
		{"later block alone", seq(4, 4), 0},                        // same tokens, other prefix: other hash
		{"evicted", seq(0, 13), 4},                                 // block 0-7 was least recently used when the 5th block came
	}
	for _, s := range steps {
		if got := c.lookupInsert(s.ids); got != s.want {
			t.Errorf("%s: cached %d, want %d", s.name, got, s.want)
		}
	}
	if newPrefixCache(16, 15) != nil {
		t.Error("a capacity below one block must disable the cache")
	}
	var disabled *prefixCache
	if disabled.lookupInsert(seq(0, 64)) != 0 || disabled.blocks() != 0 {
		t.Error("nil cache must report nothing cached")
	}
}

// TestPrefixCacheMatchesOracle compares the hashed LRU with the slow
// oracle on random prompts that share prefixes.
func TestPrefixCacheMatchesOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct{ block, capTokens int }{{4, 16}, {16, 256}, {3, 30}, {1, 7}} {
		fast := newPrefixCache(tc.block, tc.capTokens)
		slow := &slowCache{block: tc.block, slots: tc.capTokens / tc.block}
		stems := make([][]int, 6)
		for i := range stems {
			stems[i] = make([]int, rng.IntN(40))
			for j := range stems[i] {
				stems[i][j] = rng.IntN(5)
			}
		}
		for i := range 2000 {
			ids := slices.Clone(stems[rng.IntN(len(stems))])
			for range rng.IntN(20) {
				ids = append(ids, rng.IntN(5))
			}
			if f, s := fast.lookupInsert(ids), slow.lookupInsert(ids); f != s {
				t.Fatalf("block %d cap %d step %d: fast %d, oracle %d", tc.block, tc.capTokens, i, f, s)
			}
			if fast.blocks() != len(slow.lru) {
				t.Fatalf("step %d: %d blocks cached, oracle %d", i, fast.blocks(), len(slow.lru))
			}
		}
	}
}

// TestCachedTokensEndToEnd checks usage.cached_tokens, the prefix-cache
// metrics and the oracle log for requests sharing a prefix.
func TestCachedTokensEndToEnd(t *testing.T) {
	s := startServer(t, nil)
	prompt := func(n, salt int) string {
		ids := make([]string, n)
		for i := range ids {
			ids[i] = fmt.Sprint(1000 + i)
		}
		if salt >= 0 {
			ids[n-1] = fmt.Sprint(salt)
		}
		return `{"prompt":[` + strings.Join(ids, ",") + `],"max_tokens":1,"stream":true,"stream_options":{"include_usage":true}}`
	}
	cases := []struct {
		body       string
		wantCached int
	}{
		{prompt(100, -1), 0},
		{prompt(100, -1), 96}, // 6 full blocks of 16; the partial 4 never
		{prompt(100, 7), 96},  // differs only in the partial block
		{prompt(40, 7), 32},   // a shorter prompt reuses its two full blocks
		{prompt(33, 7), 32},   // two full blocks, then a one-token partial block
	}
	for i, c := range cases {
		r := mustDo(t, s, "POST", "/v1/completions", c.body)
		if u := streamUsage(t, r.body, true); u.PromptTokensDetails.CachedTokens != c.wantCached {
			t.Errorf("request %d: cached_tokens %d, want %d", i, u.PromptTokensDetails.CachedTokens, c.wantCached)
		}
	}
	logs := logOf(t, s)
	hits := 0
	for _, l := range logs {
		hits += l.CachedTokens
	}
	if hits != 96+96+32+32 {
		t.Errorf("log cached tokens sum %d", hits)
	}
	m := string(mustDo(t, s, "GET", "/metrics", "").body)
	for _, want := range []string{
		`vllm:prefix_cache_hits_total{model_name="reprise-mock"} 256`,
		`vllm:prefix_cache_queries_total{model_name="reprise-mock"} 373`,
		`vllm:prompt_tokens_total{model_name="reprise-mock"} 373`,
	} {
		if !strings.Contains(m, want+"\n") {
			t.Errorf("metrics lack %q", want)
		}
	}
}
