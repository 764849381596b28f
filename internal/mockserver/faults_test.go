package mockserver

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestParseFault(t *testing.T) {
	tests := []struct {
		in      string
		want    Fault
		wantErr bool
	}{
		{in: "429", want: Fault{Kind: Fault429}},
		{in: " 503 ", want: Fault{Kind: Fault503}},
		{in: "reset-before-headers", want: Fault{Kind: FaultResetBeforeHeaders}},
		{in: "stall=2s", want: Fault{Kind: FaultStall, Delay: 2 * time.Second}},
		{in: "stall", want: Fault{Kind: FaultStall, Delay: time.Second}}, // default delay
		{in: "slow-headers=250ms", want: Fault{Kind: FaultSlowHeaders, Delay: 250 * time.Millisecond}},
		{in: "stall=soon", wantErr: true},
		{in: "stall=-1s", wantErr: true},
		{in: "429=1", wantErr: true},
		{in: "teapot", wantErr: true},
		{in: "", wantErr: true},
	}
	for _, tt := range tests {
		got, err := ParseFault(tt.in)
		if (err != nil) != tt.wantErr || (err == nil && got != tt.want) {
			t.Errorf("ParseFault(%q) = %+v, %v; want %+v, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
		if err == nil {
			if back, err := ParseFault(got.String()); err != nil || back != got {
				t.Errorf("round trip of %q via %q: %+v, %v", tt.in, got.String(), back, err)
			}
		}
	}
	for _, tt := range []struct {
		in      string
		want    FaultRate
		wantErr bool
	}{
		{in: "429@0.01", want: FaultRate{Fault: Fault{Kind: Fault429}, Rate: 0.01}},
		{in: "stall=2s@1", want: FaultRate{Fault: Fault{Kind: FaultStall, Delay: 2 * time.Second}, Rate: 1}},
		{in: "429", wantErr: true},
		{in: "429@1.5", wantErr: true},
		{in: "429@x", wantErr: true},
		{in: "nope@0.1", wantErr: true},
	} {
		got, err := ParseFaultRate(tt.in)
		if (err != nil) != tt.wantErr || (err == nil && got != tt.want) {
			t.Errorf("ParseFaultRate(%q) = %+v, %v; want %+v, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

const faultChat = `{"messages":[{"role":"user","content":"hello"}],"max_tokens":10,"ignore_eos":true,"stream":true,"stream_options":{"include_usage":true}}`

// logOf returns the oracle log once no request is in flight.
func logOf(t testing.TB, s *Server) []RequestLog {
	t.Helper()
	if err := s.WaitIdle(t.Context()); err != nil {
		t.Fatal(err)
	}
	return s.Log()
}

func lastLog(t *testing.T, s *Server) RequestLog {
	t.Helper()
	logs := logOf(t, s)
	if len(logs) == 0 {
		t.Fatal("empty oracle log")
	}
	return logs[len(logs)-1]
}

func kinds(l RequestLog) []EventKind {
	var k []EventKind
	for _, e := range l.Events {
		k = append(k, e.Kind)
	}
	return k
}

func TestStatusFaults(t *testing.T) {
	for _, flavor := range []Flavor{FlavorVLLM, FlavorLlamaCPP} {
		s := startServer(t, func(c *Config) { c.Flavor = flavor })
		for _, code := range []int{429, 500, 503} {
			fault := map[int]string{429: "429", 500: "500", 503: "503"}[code]
			r := mustDo(t, s, "POST", "/v1/chat/completions", faultChat, FaultHeader, fault, RequestIDHeader, "req-"+fault)
			var c chunk
			if err := json.Unmarshal(r.body, &c); err != nil || c.Error == nil {
				t.Fatalf("%s %d: body %q is not an error object (%v)", flavor, code, r.body, err)
			}
			if r.status != code || c.Error.Code != code || c.Error.Message == "" || c.Error.Type == "" {
				t.Errorf("%s fault %s: status %d, error %+v", flavor, fault, r.status, c.Error)
			}
			l := lastLog(t, s)
			if l.Status != code || l.Fault != fault || l.ClientRequestID != "req-"+fault || l.Events[0].Kind != EventBody {
				t.Errorf("%s fault %s: log %+v", flavor, fault, l)
			}
		}
	}
}

func TestResetFaults(t *testing.T) {
	for _, flavor := range []Flavor{FlavorVLLM, FlavorLlamaCPP} {
		s := startServer(t, func(c *Config) { c.Flavor = flavor })
		if _, err := do(t, s, "POST", "/v1/chat/completions", faultChat, FaultHeader, "reset-before-headers"); err == nil {
			t.Errorf("%s reset-before-headers: request succeeded", flavor)
		}
		if l := lastLog(t, s); l.Status != 0 || len(l.Events) != 1 || l.Events[0].Kind != EventReset {
			t.Errorf("%s reset-before-headers: log %+v", flavor, l)
		}

		r, err := do(t, s, "POST", "/v1/chat/completions", faultChat, FaultHeader, "reset-mid-stream")
		if err != nil || r.err == nil {
			t.Errorf("%s reset-mid-stream: request error %v, body error %v; want headers then a broken body", flavor, err, r.err)
		}
		if n := strings.Count(string(r.body), `"content":"`); n > 5 {
			t.Errorf("%s reset-mid-stream: %d content events before the reset, want at most 5", flavor, n)
		}
		l := lastLog(t, s)
		if l.OutputTokens != 5 || l.Events[len(l.Events)-1].Kind != EventReset {
			t.Errorf("%s reset-mid-stream: %d tokens, events %v; want 5 tokens then reset", flavor, l.OutputTokens, kinds(l))
		}

		// Non-streamed: the reset comes instead of the body.
		if _, err := do(t, s, "POST", "/v1/chat/completions", strings.Replace(faultChat, `"stream":true`, `"stream":false`, 1),
			FaultHeader, "reset-mid-stream"); err == nil {
			t.Errorf("%s non-streamed reset-mid-stream: request succeeded", flavor)
		}
	}
}

func TestStreamFaults(t *testing.T) {
	for _, flavor := range []Flavor{FlavorVLLM, FlavorLlamaCPP} {
		s := startServer(t, func(c *Config) { c.Flavor = flavor })

		r := mustDo(t, s, "POST", "/v1/chat/completions", faultChat, FaultHeader, "malformed-sse")
		data := sseData(r.body)
		bad := 0
		for _, d := range data {
			if d != "[DONE]" && !json.Valid([]byte(d)) {
				bad++
			}
		}
		if bad != 1 || data[len(data)-1] != "[DONE]" {
			t.Errorf("%s malformed-sse: %d malformed events, last %q; want 1 and a normal end", flavor, bad, data[len(data)-1])
		}
		if l := lastLog(t, s); l.OutputTokens != 10 || !containsKind(l, EventMalformed) {
			t.Errorf("%s malformed-sse: log %v", flavor, kinds(l))
		}

		r = mustDo(t, s, "POST", "/v1/chat/completions", faultChat, FaultHeader, "error-event")
		data = sseData(r.body)
		errAt := -1
		for i, d := range data {
			var c chunk
			if json.Unmarshal([]byte(d), &c) == nil && c.Error != nil {
				errAt = i
			}
		}
		switch {
		case r.status != 200 || errAt < 0:
			t.Errorf("%s error-event: status %d, no error event in %q", flavor, r.status, r.body)
		case flavor == FlavorVLLM && (errAt != len(data)-2 || data[len(data)-1] != "[DONE]"):
			t.Errorf("vllm error-event: want the error event then [DONE], got %q", data[errAt:])
		case flavor == FlavorLlamaCPP && errAt != len(data)-1:
			t.Errorf("llamacpp error-event: want the stream to end at the error event, got %q", data[errAt:])
		}

		const stall = 150 * time.Millisecond
		mustDo(t, s, "POST", "/v1/chat/completions", faultChat, FaultHeader, "stall="+stall.String())
		l := lastLog(t, s)
		times := l.TokenTimes(nil, 0)
		// The server never writes early, so the gap around the stall is at
		// least the stall; with zero ITL the other gaps are tiny.
		if len(times) != 10 || time.Duration(times[5]-times[4]) < stall {
			t.Errorf("%s stall: token times %v, want a gap of at least %v after token 5; log %+v", flavor, times, stall, l)
		}

		const slow = 120 * time.Millisecond
		r = mustDo(t, s, "POST", "/v1/chat/completions", faultChat, FaultHeader, "slow-headers="+slow.String())
		l = lastLog(t, s)
		if r.status != 200 || l.Events[0].Kind != EventHeaders || time.Duration(l.Events[0].TimeNS-l.ReceivedNS) < slow ||
			l.FirstTokenNS() < l.Events[0].TimeNS {
			t.Errorf("%s slow-headers: status %d, events %v, headers after %v", flavor, r.status, kinds(l),
				time.Duration(l.Events[0].TimeNS-l.ReceivedNS))
		}
		if u := streamUsage(t, r.body, true); u.CompletionTokens != 10 {
			t.Errorf("%s slow-headers: the stream after the headers is incomplete: %+v", flavor, u)
		}
		// Non-streamed slow headers: headers first, the body later.
		r = mustDo(t, s, "POST", "/v1/chat/completions", strings.Replace(faultChat, `"stream":true`, `"stream":false`, 1),
			FaultHeader, "slow-headers=50ms")
		if u := streamUsage(t, r.body, false); u.CompletionTokens != 10 || !containsKind(lastLog(t, s), EventHeaders) {
			t.Errorf("%s non-streamed slow-headers: usage %+v, log %v", flavor, u, kinds(lastLog(t, s)))
		}

		// A bad fault header is the client's error.
		r = mustDo(t, s, "POST", "/v1/chat/completions", faultChat, FaultHeader, "teapot")
		if r.status != 400 || !strings.Contains(string(r.body), FaultHeader) {
			t.Errorf("%s bad fault header: %d %s", flavor, r.status, r.body)
		}
	}
}

func containsKind(l RequestLog, k EventKind) bool {
	for _, e := range l.Events {
		if e.Kind == k {
			return true
		}
	}
	return false
}

// TestFaultRates injects faults at random with a fixed seed.
func TestFaultRates(t *testing.T) {
	s := startServer(t, func(c *Config) {
		c.Faults = []FaultRate{{Fault: Fault{Kind: Fault503}, Rate: 0.5}, {Fault: Fault{Kind: FaultMalformedSSE}, Rate: 0}}
	})
	n503 := 0
	for range 60 {
		r := mustDo(t, s, "POST", "/v1/chat/completions", faultChat)
		switch r.status {
		case 503:
			n503++
		case 200:
		default:
			t.Fatalf("status %d", r.status)
		}
	}
	if n503 < 15 || n503 > 45 {
		t.Errorf("%d of 60 requests got 503 at rate 0.5", n503)
	}
	for _, l := range logOf(t, s) {
		if (l.Status == 503) != (l.Fault == "503") {
			t.Errorf("log: status %d with fault %q", l.Status, l.Fault)
		}
	}
}

// TestBadRequests checks the errors real servers give, never a crash.
func TestBadRequests(t *testing.T) {
	tests := []struct {
		flavor Flavor
		path   string
		body   string
		status int
		msg    string // substring of the error message
	}{
		{FlavorVLLM, "/v1/chat/completions", `{"model":"nope","messages":[{"role":"user","content":"x"}]}`, 404, "The model `nope` does not exist."},
		{FlavorLlamaCPP, "/v1/chat/completions", `{"model":"nope","messages":[{"role":"user","content":"x"}],"max_tokens":1}`, 200, ""}, // llama.cpp ignores model
		{FlavorVLLM, "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}]`, 400, "Failed to read and parse request body"},
		{FlavorLlamaCPP, "/v1/chat/completions", `{"messages":[`, 500, "parse error"},
		{FlavorVLLM, "/v1/completions", `{"prompt":"x","max_tokens":100}`, 400, "maximum context length is 64 tokens"},
		{FlavorVLLM, "/v1/completions", `{"prompt":[` + strings.Repeat("1,", 70) + `1]}`, 400, "71 input tokens"},
		{FlavorLlamaCPP, "/v1/completions", `{"prompt":[` + strings.Repeat("1,", 70) + `1]}`, 400, "exceeds the available context size"},
		{FlavorVLLM, "/v1/completions", `{"prompt":"x","max_tokens":0}`, 400, "max_tokens"},
		{FlavorVLLM, "/v1/completions", `{"prompt":"x","n":0}`, 400, "n must be"},
		{FlavorVLLM, "/v1/completions", `{"prompt":[-1]}`, 400, "token id"},
		{FlavorVLLM, "/v1/completions", `{"prompt":["a","b"]}`, 400, "batched"},
		{FlavorVLLM, "/v1/completions", `{"prompt":{}}`, 400, "prompt"},
		{FlavorVLLM, "/v1/completions", `{"max_tokens":3}`, 400, "prompt"},
		{FlavorVLLM, "/v1/chat/completions", `{"messages":[{"role":"user","content":7}]}`, 400, "content"},
		{FlavorVLLM, "/v1/chat/completions", `{"messages":"hi"}`, 400, "messages"},
		{FlavorVLLM, "/v1/chat/completions", `[]`, 400, ""},
		{FlavorVLLM, "/v1/chat/completions", ``, 400, "unexpected end"},
	}
	servers := map[Flavor]*Server{}
	for _, f := range []Flavor{FlavorVLLM, FlavorLlamaCPP} {
		servers[f] = startServer(t, func(c *Config) { c.Flavor = f; c.MaxModelLen = 64 })
	}
	for _, tt := range tests {
		r := mustDo(t, servers[tt.flavor], "POST", tt.path, tt.body)
		if r.status != tt.status || !strings.Contains(string(r.body), tt.msg) {
			t.Errorf("%s %s %s: %d %s; want %d with %q", tt.flavor, tt.path, tt.body, r.status, r.body, tt.status, tt.msg)
		}
	}
	// llama.cpp truncates max_tokens over the context instead of refusing.
	r := mustDo(t, servers[FlavorLlamaCPP], "POST", "/v1/completions", `{"prompt":[1,2,3,4],"max_tokens":5000,"ignore_eos":true}`)
	if u := streamUsage(t, r.body, false); u.CompletionTokens != 60 || !strings.Contains(string(r.body), `"finish_reason":"length"`) {
		t.Errorf("llamacpp max_tokens over context: %s", r.body)
	}
	// Wrong method and unknown path.
	if r := mustDo(t, servers[FlavorVLLM], "GET", "/v1/chat/completions", ""); r.status != 405 {
		t.Errorf("GET completions: %d", r.status)
	}
	if r := mustDo(t, servers[FlavorVLLM], "POST", "/v2/nothing", "{}"); r.status != 404 {
		t.Errorf("unknown path: %d", r.status)
	}
}

func TestModelsHealthMetrics(t *testing.T) {
	s := startServer(t, func(c *Config) { c.Models = []string{"a", "b"} })
	var models struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	r := mustDo(t, s, "GET", "/v1/models", "")
	if err := json.Unmarshal(r.body, &models); err != nil || len(models.Data) != 2 || models.Data[1].ID != "b" {
		t.Errorf("/v1/models: %s (%v)", r.body, err)
	}
	if r := mustDo(t, s, "GET", "/health", ""); r.status != 200 {
		t.Errorf("/health: %d", r.status)
	}
	mustDo(t, s, "POST", "/v1/chat/completions", `{"model":"b","messages":[{"role":"user","content":"x"}],"max_tokens":3,"ignore_eos":true}`)
	// The client reads the end of the response before the handler has
	// counted it: wait for the handler to finish.
	if err := s.WaitIdle(t.Context()); err != nil {
		t.Fatal(err)
	}
	m := string(mustDo(t, s, "GET", "/metrics", "").body)
	for _, want := range []string{
		`vllm:generation_tokens_total{model_name="a"} 3`,
		`vllm:time_to_first_token_seconds_count{model_name="a"} 1`,
		`vllm:inter_token_latency_seconds_count{model_name="a"} 2`,
		`vllm:e2e_request_latency_seconds_count{model_name="a"} 1`,
		`vllm:request_success_total{finish_reason="length",model_name="a"} 1`,
		`vllm:num_requests_running{model_name="a"} 0`,
	} {
		if !strings.Contains(m, want+"\n") {
			t.Errorf("metrics lack %q", want)
		}
	}
}

// TestBodyTooLarge: an oversized body gets a 413, not an empty 200.
func TestBodyTooLarge(t *testing.T) {
	s := startServer(t, func(c *Config) { c.maxBody = 1000 })
	r := mustDo(t, s, "POST", "/v1/completions", `{"prompt":"`+strings.Repeat("a ", 600)+`"}`)
	if r.status != 413 || !strings.Contains(string(r.body), "request body over") || strings.Contains(string(r.body), "InternalServerError") {
		t.Errorf("oversized body: %d %.200s", r.status, r.body)
	}
}

// TestH2C: the same port speaks prior-knowledge h2c; streams arrive as
// events, and a reset fault resets only its HTTP/2 stream.
func TestH2C(t *testing.T) {
	for _, flavor := range []Flavor{FlavorVLLM, FlavorLlamaCPP} {
		s := startServer(t, func(c *Config) { c.Flavor = flavor })
		var p http.Protocols
		p.SetUnencryptedHTTP2(true)
		tr := &http.Transport{Protocols: &p}
		cl := &http.Client{Transport: tr}
		send := func(fault string) (*http.Response, []byte, error) {
			req, _ := http.NewRequestWithContext(t.Context(), "POST", s.URL()+"/v1/chat/completions", strings.NewReader(faultChat))
			if fault != "" {
				req.Header.Set(FaultHeader, fault)
			}
			resp, err := cl.Do(req)
			if err != nil {
				return nil, nil, err
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			return resp, b, err
		}
		resp, body, err := send("")
		if err != nil || resp.ProtoMajor != 2 {
			t.Fatalf("%s: h2c request: %v (proto %v)", flavor, err, resp)
		}
		if u := streamUsage(t, body, true); u.CompletionTokens != 10 {
			t.Errorf("%s: h2c usage %+v", flavor, u)
		}
		if _, _, err := send("reset-mid-stream"); err == nil {
			t.Errorf("%s: h2c reset-mid-stream: no error", flavor)
		}
		if l := lastLog(t, s); l.OutputTokens != 5 || l.Events[len(l.Events)-1].Kind != EventReset {
			t.Errorf("%s: h2c reset log %v", flavor, kinds(l))
		}
		if resp, _, err := send(""); err != nil || resp.StatusCode != 200 {
			t.Errorf("%s: h2c request after a stream reset: %v", flavor, err)
		}
		tr.CloseIdleConnections()
	}
}
