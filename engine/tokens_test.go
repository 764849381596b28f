package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/engine/adapter/openai"

	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/internal/tokenizer"
)

func builtinTokenizer(t testing.TB) tokenizer.Tokenizer {
	t.Helper()
	tok, err := tokenizer.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// recordedTimings returns the last "timings" object of a recorded body.
func recordedTimings(t *testing.T, body []byte) map[string]any {
	t.Helper()
	var last map[string]any
	for _, line := range bytes.Split(body, []byte("\n")) {
		line = bytes.TrimPrefix(bytes.TrimSpace(line), []byte("data: "))
		var chunk struct {
			Timings map[string]any `json:"timings"`
		}
		if json.Unmarshal(line, &chunk) == nil && chunk.Timings != nil {
			last = chunk.Timings
		}
	}
	return last
}

// TestFixturesOutputTokens replays the recorded streams with the builtin
// tokenizer: by default a stream with usage takes the server's completion
// tokens for its OSL and ITL, keeps the client's count and the difference,
// and a client-counted run (UseServerTokenCount false) uses the client's;
// the event rows add up to the client's count either way; llama.cpp's
// timings are kept verbatim.
func TestFixturesOutputTokens(t *testing.T) {
	tok := builtinTokenizer(t)
	checked := map[string]bool{}
	for _, f := range loadFixtures(t) {
		ss := f.Sidecar.StreamSummary
		stream := strings.Contains(f.Sidecar.Request.Body, `"stream":true`) || strings.Contains(f.Sidecar.Request.Body, `"stream": true`)
		if f.Status != 200 || ss == nil || !stream || len(ss.ErrorEvents) > 0 {
			continue
		}
		for _, useServer := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/server=%v", f.Name, useServer), func(t *testing.T) {
				srv := httptest.NewServer(serveFixture(f))
				defer srv.Close()
				ep := openai.Chat
				if !strings.Contains(f.Sidecar.Request.Path, "chat") {
					ep = openai.Completions
				}
				cfg := NewConfig()
				cfg.BaseURL = srv.URL
				cfg.Adapter = openai.Adapter{Endpoint: ep}
				cfg.AdapterConfig = adapter.Config{Model: "m", Stream: true, IncludeUsage: true}
				cfg.Counter = tok
				cfg.Events = true
				cfg.UseServerTokenCount = useServer
				e, err := New(cfg)
				if err != nil {
					t.Fatal(err)
				}
				defer e.Close()
				s, err := e.NewSender()
				if err != nil {
					t.Fatal(err)
				}
				var r record.Request
				s.Do(context.Background(), prepared(t, e, true), &r)
				if !r.OK() {
					t.Fatalf("%s: %s", r.ErrorKind, r.ErrorMessage)
				}
				client := r.OutputTokens + r.ReasoningTokens
				var want int32
				for _, b := range [][]byte{s.fin.Text, s.fin.Reasoning} {
					want += int32(tok.Count(string(b)))
				}
				if client != want || client == 0 {
					t.Errorf("client count %d, the tokenizer says %d", client, want)
				}
				server := r.ServerCompletionTokens
				t.Logf("client %d tokens, server %d, ITL %.3f ms", client, server, r.ITLNS/1e6)
				osl, src := client, record.TokensClient
				if server >= 0 {
					checked[f.Name] = true
					if r.ServerMinusClientOutputTokens != server-client {
						t.Errorf("server minus client %d, want %d − %d", r.ServerMinusClientOutputTokens, server, client)
					}
					if useServer {
						osl, src = server, record.TokensServer
					}
				} else if r.ServerMinusClientOutputTokens != record.NoTokenDiff {
					t.Errorf("no usage, but a difference of %d", r.ServerMinusClientOutputTokens)
				}
				if r.OutputTokensSource != src || r.OutputLength() != int64(osl) {
					t.Errorf("OSL %d from %s, want %d from %s", r.OutputLength(), r.OutputTokensSource, osl, src)
				}
				if wantITL := float64(r.LastTokenNS-r.FirstTokenNS) / float64(osl-1); osl >= 2 && r.ITLNS != wantITL {
					t.Errorf("ITL %v, want (last − first)/(OSL − 1) = %v", r.ITLNS, wantITL)
				}
				var sum int32
				for _, ev := range s.Events() {
					sum += max(ev.Tokens, 0)
				}
				if sum != client {
					t.Errorf("event rows carry %d tokens, the client counted %d", sum, client)
				}
				if timings := recordedTimings(t, f.Body); timings != nil {
					var got map[string]any
					if err := json.Unmarshal([]byte(r.ServerExtras), &got); err != nil || !reflect.DeepEqual(got, timings) {
						t.Errorf("server_extras %q (%v), want the recorded timings %v", r.ServerExtras, err, timings)
					}
				} else if r.ServerExtras != "" {
					t.Errorf("server_extras %q without timings in the recording", r.ServerExtras)
				}
			})
		}
	}
	for _, name := range []string{"vllm-sim/timing_stream_1", "vllm-sim/chat_stream_usage", "llamacpp/chat_stream_usage", "llamacpp/reasoning_stream_transition"} {
		if !checked[name] {
			t.Errorf("%s was not replayed with usage", name)
		}
	}
}
