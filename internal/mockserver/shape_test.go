package mockserver

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestShapesMatchFixtures sends each recorded request to the mock server in
// the matching flavor and compares the response with the recording: status,
// content type, and the key structure (with key order) of every event, runs
// of equal events collapsed. So the role chunk, the finish chunk, where usage
// sits, and [DONE] must match.
func TestShapesMatchFixtures(t *testing.T) {
	tests := []struct {
		flavor  string // fixture directory
		name    string
		headers []string // extra request headers
		twice   bool     // send twice, compare the second response
	}{
		{flavor: "vllm-sim", name: "chat_stream_usage"},
		{flavor: "vllm-sim", name: "chat_stream_no_usage"},
		{flavor: "vllm-sim", name: "chat_stream_natural_stop"},
		{flavor: "vllm-sim", name: "chat_nonstream"},
		{flavor: "vllm-sim", name: "chat_stream_cached_tokens", twice: true},
		{flavor: "vllm-sim", name: "completions_stream_usage"},
		{flavor: "vllm-sim", name: "completions_token_ids"},
		{flavor: "vllm-sim", name: "completions_token_ids_stream"},
		{flavor: "vllm-sim", name: "keepalive_second_request"},
		{flavor: "vllm-sim", name: "error_unknown_model"},
		{flavor: "vllm-sim", name: "error_context_too_long"},
		{flavor: "vllm-sim", name: "error_max_tokens_over_context"},
		{flavor: "vllm-sim", name: "error_invalid_json"},
		{flavor: "vllm-sim", name: "error_429_header", headers: []string{FaultHeader, "429"}},
		{flavor: "llamacpp", name: "chat_stream_usage"},
		{flavor: "llamacpp", name: "chat_stream_no_usage"},
		{flavor: "llamacpp", name: "chat_nonstream"},
		{flavor: "llamacpp", name: "chat_stream_cached_tokens", twice: true},
		{flavor: "llamacpp", name: "completions_stream_usage"},
		{flavor: "llamacpp", name: "completions_token_ids"},
		{flavor: "llamacpp", name: "completions_token_ids_stream"},
		{flavor: "llamacpp", name: "keepalive_second_request"},
		{flavor: "llamacpp", name: "error_context_too_long"},
		{flavor: "llamacpp", name: "error_invalid_json"},
		{flavor: "llamacpp", name: "error_max_tokens_over_context"},
		{flavor: "llamacpp", name: "reasoning_nonstream"},
		{flavor: "llamacpp", name: "reasoning_stream_transition"},
		// llama.cpp's own mid-stream error, reproduced with the error-event fault.
		{flavor: "llamacpp", name: "raw_midstream_error_stream", headers: []string{FaultHeader, "error-event"}},
	}
	for _, tt := range tests {
		t.Run(tt.flavor+"/"+tt.name, func(t *testing.T) {
			fx := loadFixture(t, tt.flavor, tt.name)
			s := startServer(t, func(c *Config) {
				c.MaxModelLen = 1024
				if tt.flavor == "llamacpp" {
					c.Flavor = FlavorLlamaCPP
					c.Models = []string{"tiny-llama"}
				} else {
					c.Models = []string{"sim-model"}
				}
				if strings.HasPrefix(tt.name, "reasoning") {
					c.ReasoningTokens = 12
				}
			})
			got := mustDo(t, s, fx.Request.Method, fx.Request.Path, fx.Request.Body, tt.headers...)
			if tt.twice {
				got = mustDo(t, s, fx.Request.Method, fx.Request.Path, fx.Request.Body, tt.headers...)
			}
			if got.status != fx.Response.Status {
				t.Errorf("status %d, recorded %d; body %s", got.status, fx.Response.Status, got.body)
			}
			wantCT := header(fx.Response.Headers, "Content-Type")
			if ct := got.header.Get("Content-Type"); ct != wantCT {
				t.Errorf("Content-Type %q, recorded %q", ct, wantCT)
			}
			if tt.flavor == "llamacpp" {
				for _, h := range []string{"Server", "Keep-Alive", "Access-Control-Allow-Origin"} {
					if want, ok := headerOK(fx.Response.Headers, h); ok {
						if v, present := got.header[h]; !present || v[0] != want {
							t.Errorf("header %s = %q, recorded %q", h, v, want)
						}
					}
				}
				if _, ok := got.header["Date"]; ok {
					t.Errorf("llama.cpp sends no Date header, got %q", got.header.Get("Date"))
				}
			}
			if strings.HasPrefix(wantCT, "text/event-stream") {
				want, have := streamShape(t, fx.body), streamShape(t, got.body)
				if d := cmp.Diff(want, have); d != "" {
					t.Errorf("event shapes differ from the recording (-recorded +mock):\n%s\nmock body:\n%s", d, got.body)
				}
				return
			}
			want, err := shape(string(fx.body))
			if err != nil {
				t.Fatalf("recorded body: %v", err)
			}
			have, err := shape(string(got.body))
			if err != nil {
				t.Fatalf("mock body %q: %v", got.body, err)
			}
			if d := cmp.Diff(want, have); d != "" {
				t.Errorf("body shape differs (-recorded +mock):\n%s\nmock body: %s", d, got.body)
			}
		})
	}
}

func header(h [][2]string, name string) string {
	v, _ := headerOK(h, name)
	return v
}

func headerOK(h [][2]string, name string) (string, bool) {
	for _, kv := range h {
		if strings.EqualFold(kv[0], name) {
			return kv[1], true
		}
	}
	return "", false
}

// usage is the part of a usage object the tests read.
type usage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails *struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

// chunk is the part of a response body or stream chunk the tests read.
type chunk struct {
	ID      string `json:"id"`
	Choices []struct {
		Index        int     `json:"index"`
		FinishReason *string `json:"finish_reason"`
		Text         *string `json:"text"`
		Delta        *struct {
			Role             *string `json:"role"`
			Content          *string `json:"content"`
			ReasoningContent *string `json:"reasoning_content"`
		} `json:"delta"`
		Message *struct {
			Content          string `json:"content"`
			ReasoningContent string `json:"reasoning_content"`
		} `json:"message"`
	} `json:"choices"`
	Usage *usage `json:"usage"`
	Error *struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    int    `json:"code"`
	} `json:"error"`
}

// streamUsage returns the last usage object of a stream (or of a body).
func streamUsage(t *testing.T, body []byte, stream bool) usage {
	t.Helper()
	if !stream {
		var c chunk
		if err := json.Unmarshal(body, &c); err != nil || c.Usage == nil {
			t.Fatalf("body without usage (%v): %s", err, body)
		}
		return *c.Usage
	}
	var u *usage
	for _, d := range sseData(body) {
		var c chunk
		if d == "[DONE]" || json.Unmarshal([]byte(d), &c) != nil {
			continue
		}
		if c.Usage != nil {
			u = c.Usage
		}
	}
	if u == nil {
		t.Fatalf("stream without usage: %s", body)
	}
	return *u
}

// TestRequestSemantics checks max_tokens, ignore_eos, n, include_usage,
// reasoning tokens and the three prompt forms against the usage reported
// and the content sent.
func TestRequestSemantics(t *testing.T) {
	for _, flavor := range []Flavor{FlavorVLLM, FlavorLlamaCPP} {
		t.Run(string(flavor), func(t *testing.T) {
			s := startServer(t, func(c *Config) { c.Flavor = flavor; c.ReasoningTokens = 3; c.PrefixCacheTokens = 0 })
			tok, err := DefaultTokenizer()
			if err != nil {
				t.Fatal(err)
			}
			text := "The mock server counts prompts with the builtin tokenizer."
			want := len(tok.AppendEncode(nil, text))

			// Chat, streamed, include_usage, n=2, exact length.
			r := mustDo(t, s, "POST", "/v1/chat/completions", `{"messages":[{"role":"system","content":"`+text+
				`"},{"role":"user","content":[{"type":"text","text":"`+text+`"}]}],"max_completion_tokens":7,"ignore_eos":true,"n":2,`+
				`"stream":true,"stream_options":{"include_usage":true}}`)
			u := streamUsage(t, r.body, true)
			if u.PromptTokens != 2*want || u.CompletionTokens != 14 || u.TotalTokens != 2*want+14 {
				t.Errorf("usage %+v, want prompt %d completion 14", u, 2*want)
			}
			if flavor == FlavorVLLM && (u.CompletionTokensDetails == nil || u.CompletionTokensDetails.ReasoningTokens != 6) {
				t.Errorf("completion_tokens_details %+v, want 6 reasoning tokens", u.CompletionTokensDetails)
			}
			counts := map[[2]int]int{} // [choice, 0 content / 1 reasoning]
			finishes := 0
			for _, d := range sseData(r.body) {
				var c chunk
				if d == "[DONE]" {
					continue
				}
				if err := json.Unmarshal([]byte(d), &c); err != nil {
					t.Fatalf("chunk %q: %v", d, err)
				}
				for _, ch := range c.Choices {
					if ch.FinishReason != nil {
						finishes++
						if *ch.FinishReason != "length" {
							t.Errorf("finish_reason %q, want length", *ch.FinishReason)
						}
					}
					if ch.Delta == nil {
						continue
					}
					if ch.Delta.Content != nil && *ch.Delta.Content != "" {
						counts[[2]int{ch.Index, 0}]++
					}
					if ch.Delta.ReasoningContent != nil {
						counts[[2]int{ch.Index, 1}]++
					}
				}
			}
			wantCounts := map[[2]int]int{{0, 0}: 4, {0, 1}: 3, {1, 0}: 4, {1, 1}: 3}
			if d := cmp.Diff(wantCounts, counts); d != "" || finishes != 2 {
				t.Errorf("token chunks per [choice,reasoning] (-want +got):\n%s finishes %d", d, finishes)
			}

			// Without include_usage: vLLM sends no usage chunk.
			r = mustDo(t, s, "POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"max_tokens":3,"stream":true}`)
			if flavor == FlavorVLLM && strings.Contains(string(r.body), `"prompt_tokens"`) {
				t.Errorf("usage without include_usage: %s", r.body)
			}

			// Completions with a token-id prompt: prompt_tokens is its length.
			r = mustDo(t, s, "POST", "/v1/completions", `{"prompt":[5,6,7,8,9],"max_tokens":4,"ignore_eos":true}`)
			if u := streamUsage(t, r.body, false); u.PromptTokens != 5 || u.CompletionTokens != 4 {
				t.Errorf("token-id prompt usage %+v, want 5 prompt, 4 completion", u)
			}
			// Completions with text, and with a one-element list of text.
			for _, p := range []string{`"` + text + `"`, `["` + text + `"]`} {
				r = mustDo(t, s, "POST", "/v1/completions", `{"prompt":`+p+`,"max_tokens":2,"ignore_eos":true}`)
				if u := streamUsage(t, r.body, false); u.PromptTokens != want {
					t.Errorf("prompt %s: prompt_tokens %d, want %d", p, u.PromptTokens, want)
				}
			}

			// Without ignore_eos the length is random within [1, max_tokens],
			// finish_reason "length" exactly when it reaches max_tokens.
			seen := map[int]bool{}
			for range 40 {
				r = mustDo(t, s, "POST", "/v1/completions", `{"prompt":"x","max_tokens":5}`)
				var c chunk
				if err := json.Unmarshal(r.body, &c); err != nil {
					t.Fatal(err)
				}
				n := c.Usage.CompletionTokens
				seen[n] = true
				if n < 1 || n > 5 {
					t.Fatalf("random length %d outside [1,5]", n)
				}
				if wantReason := map[bool]string{true: "length", false: "stop"}[n == 5]; *c.Choices[0].FinishReason != wantReason {
					t.Errorf("length %d with finish_reason %q", n, *c.Choices[0].FinishReason)
				}
			}
			if len(seen) < 3 {
				t.Errorf("40 random lengths took only %d values: %v", len(seen), seen)
			}
		})
	}
}

// TestChatTemplateTokens adds N tokens per message.
func TestChatTemplateTokens(t *testing.T) {
	s := startServer(t, func(c *Config) { c.ChatTemplateTokens = 4 })
	tok, _ := DefaultTokenizer()
	n := len(tok.AppendEncode(nil, "hello world"))
	r := mustDo(t, s, "POST", "/v1/chat/completions", `{"messages":[{"role":"system","content":"hello world"},{"role":"user","content":"hello world"}],"max_tokens":1}`)
	if u := streamUsage(t, r.body, false); u.PromptTokens != 2*n+8 {
		t.Errorf("prompt_tokens %d, want %d", u.PromptTokens, 2*n+8)
	}
}

// TestLlamaClosesAfterStream checks llama.cpp's quirk: the connection is
// closed after every streamed response, but kept after a non-streamed one.
func TestLlamaClosesAfterStream(t *testing.T) {
	s := startServer(t, func(c *Config) { c.Flavor = FlavorLlamaCPP })
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	cl := &http.Client{Transport: tr}
	reused := func(body string) (bool, error) {
		var got bool
		req, _ := http.NewRequestWithContext(t.Context(), "POST", s.URL()+"/v1/chat/completions", strings.NewReader(body))
		req = req.WithContext(withGotConn(req.Context(), &got))
		resp, err := cl.Do(req)
		if err != nil {
			return got, err
		}
		defer resp.Body.Close()
		_, err = readAllString(resp)
		return got, err
	}
	const stream = `{"messages":[{"role":"user","content":"hi"}],"max_tokens":2,"stream":true}`
	const plain = `{"messages":[{"role":"user","content":"hi"}],"max_tokens":2}`
	if _, err := reused(plain); err != nil {
		t.Fatal(err)
	}
	if r, err := reused(plain); err != nil || !r {
		t.Errorf("non-streamed response: connection reused %v, err %v; want reused", r, err)
	}
	if _, err := reused(stream); err != nil {
		t.Fatal(err)
	}
	// The stream's connection was closed by the server; the next request
	// must use a new one (Go notices the FIN on the idle connection before
	// reuse, or the request fails with EOF as with the real server).
	if r, err := reused(plain); err == nil && r {
		t.Errorf("request after a stream reused the connection; llama.cpp closes it")
	}
	logs := logOf(t, s)
	if !slices.ContainsFunc(logs, func(l RequestLog) bool { return l.Stream && l.FinishReason != "" }) {
		t.Errorf("the stream is not in the log as finished: %+v", logs)
	}
}

// metricTypes returns the TYPE of every metric family of a text exposition
// and checks that every sample line is name[{labels}] value.
func metricTypes(t *testing.T, page string) map[string]string {
	t.Helper()
	types := map[string]string{}
	for line := range strings.SplitSeq(strings.TrimSpace(page), "\n") {
		if rest, ok := strings.CutPrefix(line, "# TYPE "); ok {
			name, typ, _ := strings.Cut(rest, " ")
			types[name] = typ
			continue
		}
		if strings.HasPrefix(line, "#") {
			continue
		}
		series, value, ok := strings.Cut(line, " ")
		if _, err := strconv.ParseFloat(value, 64); !ok || err != nil || strings.Count(series, "{") != strings.Count(series, "}") {
			t.Errorf("bad sample line %q", line)
		}
	}
	return types
}

// newerThanRecording lists the metrics the mock serves that the recorded
// page of its flavor predates: current llama-server counts the prompt
// tokens it reused from its cache apart (prompt_tokens_cached_total, "Number
// of prompt tokens reused from the cache"), and its prompt_tokens_total
// leaves them out, as the recorded build's already did.
var newerThanRecording = map[Flavor]map[string]string{
	FlavorLlamaCPP: {"llamacpp:prompt_tokens_cached_total": "counter"},
}

// TestMetricsMatchFixtures: every metric the mock serves exists in the
// recorded page of its flavor with the same type (or is a newer one, see
// newerThanRecording), and the required ones are there.
func TestMetricsMatchFixtures(t *testing.T) {
	for _, tc := range []struct {
		flavor   Flavor
		dir      string
		fixture  string
		required []string
	}{
		{FlavorVLLM, "vllm-sim", "metrics", []string{"vllm:num_requests_running", "vllm:num_requests_waiting",
			"vllm:kv_cache_usage_perc", "vllm:prefix_cache_hits_total", "vllm:prefix_cache_queries_total",
			"vllm:prompt_tokens_total", "vllm:generation_tokens_total", "vllm:time_to_first_token_seconds",
			"vllm:inter_token_latency_seconds", "vllm:e2e_request_latency_seconds"}},
		{FlavorLlamaCPP, "llamacpp", "metrics", nil},
	} {
		fx := loadFixture(t, tc.dir, tc.fixture)
		want := metricTypes(t, string(fx.body))
		s := startServer(t, func(c *Config) { c.Flavor = tc.flavor })
		mustDo(t, s, "POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"max_tokens":3}`)
		r := mustDo(t, s, "GET", "/metrics", "")
		if ct, wantCT := r.header.Get("Content-Type"), header(fx.Response.Headers, "Content-Type"); ct != wantCT {
			t.Errorf("%s: Content-Type %q, recorded %q", tc.flavor, ct, wantCT)
		}
		got := metricTypes(t, string(r.body))
		for name, typ := range newerThanRecording[tc.flavor] {
			want[name] = typ
		}
		for name, typ := range got {
			if want[name] != typ {
				t.Errorf("%s: %s is a %s, the recording has %q", tc.flavor, name, typ, want[name])
			}
		}
		if tc.required == nil { // llama.cpp: the same set
			for name := range want {
				tc.required = append(tc.required, name)
			}
		}
		for _, name := range tc.required {
			if _, ok := got[name]; !ok {
				t.Errorf("%s: %s missing", tc.flavor, name)
			}
		}
	}
	// Without a prefix cache there are no prefix_cache series, as recorded.
	s := startServer(t, func(c *Config) { c.PrefixCacheTokens = 0 })
	if m := string(mustDo(t, s, "GET", "/metrics", "").body); strings.Contains(m, "prefix_cache") {
		t.Errorf("prefix_cache series without a cache")
	}
}
