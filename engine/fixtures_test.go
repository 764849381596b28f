package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/engine/adapter/openai"
	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/internal/testfiles"
)

// fixture is one recorded response and what its sidecar says about it.
type fixture struct {
	Name    string
	Status  int
	Header  http.Header
	Body    []byte
	Sidecar struct {
		Request struct {
			Path string `json:"path"`
			Body string `json:"body"`
		} `json:"request"`
		Response struct {
			Status      int    `json:"status"`
			ContentType string `json:"content_type"`
		} `json:"response"`
		Timing struct {
			BodyReads []struct {
				Offset int `json:"offset"`
				Len    int `json:"len"`
			} `json:"body_reads"`
		} `json:"timing"`
		StreamSummary *struct {
			SSEEvents int  `json:"sse_events"`
			Done      bool `json:"done_sentinel"`
			PerChoice map[string]struct {
				Content    int `json:"content_deltas"`
				Reasoning  int `json:"reasoning_deltas"`
				Text       int `json:"text_deltas"`
				EmptyText  int `json:"empty_text_deltas"`
				ContentCh  int `json:"content_chars"`
				ReasonChar int `json:"reasoning_chars"`
			} `json:"per_choice"`
			Finish map[string]struct {
				FinishReason string `json:"finish_reason"`
			} `json:"finish"`
			UsageEvents []struct {
				Usage struct {
					Prompt     int `json:"prompt_tokens"`
					Completion int `json:"completion_tokens"`
					Details    *struct {
						Cached int `json:"cached_tokens"`
					} `json:"prompt_tokens_details"`
				} `json:"usage"`
			} `json:"usage_events"`
			ErrorEvents []struct {
				Error struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			} `json:"error_events"`
		} `json:"stream_summary"`
	}
}

func loadFixtures(t testing.TB) []*fixture {
	t.Helper()
	dir := testfiles.Servers(t)
	paths, _ := filepath.Glob(filepath.Join(dir, "*", "*.http"))
	if len(paths) == 0 {
		t.Fatalf("no recordings under %s", dir)
	}
	var out []*fixture
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		f := &fixture{Name: strings.TrimSuffix(strings.TrimPrefix(p, dir+"/"), ".http"), Header: http.Header{}}
		head, body, ok := bytes.Cut(raw, []byte("\r\n\r\n"))
		if !ok {
			t.Fatalf("%s: no header/body separator", p)
		}
		f.Body = body
		lines := strings.Split(string(head), "\r\n")
		parts := strings.SplitN(lines[0], " ", 3)
		f.Status, _ = strconv.Atoi(parts[1])
		for _, l := range lines[1:] {
			k, v, _ := strings.Cut(l, ":")
			f.Header.Add(k, strings.TrimSpace(v))
		}
		side, err := os.ReadFile(strings.TrimSuffix(p, ".http") + ".json")
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(side, &f.Sidecar); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if strings.HasPrefix(f.Sidecar.Request.Path, "/metrics") {
			continue
		}
		out = append(out, f)
	}
	return out
}

// serveFixture replays a recording: same status and content type, the body
// written in the recorded transfer chunks, each flushed.
func serveFixture(f *fixture) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", f.Header.Get("Content-Type"))
		w.WriteHeader(f.Status)
		reads := f.Sidecar.Timing.BodyReads
		if len(reads) == 0 {
			w.Write(f.Body)
			return
		}
		for _, rd := range reads {
			w.Write(f.Body[rd.Offset : rd.Offset+rd.Len])
			w.(http.Flusher).Flush()
		}
	}
}

func newTestEngine(t testing.TB, url string, ep openai.Endpoint, counter TokenCounter) *Engine {
	t.Helper()
	cfg := NewConfig()
	cfg.BaseURL = url
	cfg.Adapter = openai.Adapter{Endpoint: ep}
	cfg.AdapterConfig = adapter.Config{Model: "reprise-mock", Stream: true, IncludeUsage: true}
	cfg.Counter = counter
	cfg.Events = true
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

func prepared(t testing.TB, e *Engine, stream bool) *Prepared {
	t.Helper()
	b, err := e.NewBuilder()
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var p Prepared
	in := adapter.BuildInput{PromptText: "hello", MaxTokens: 16}
	if stream {
		in.Flags |= adapter.BuildStream
	}
	if err := b.Build(&in, &p); err != nil {
		t.Fatal(err)
	}
	return &p
}

// TestFixtures replays every recorded response through the whole client
// path (HTTP, SSE framing, timestamps, the native adapter) and checks the
// record against what the recording's sidecar says.
func TestFixtures(t *testing.T) {
	for _, f := range loadFixtures(t) {
		t.Run(f.Name, func(t *testing.T) {
			srv := httptest.NewServer(serveFixture(f))
			defer srv.Close()
			ep := openai.Chat
			if strings.Contains(f.Sidecar.Request.Path, "/completions") && !strings.Contains(f.Sidecar.Request.Path, "chat") {
				ep = openai.Completions
			}
			e := newTestEngine(t, srv.URL, ep, nil)
			s, err := e.NewSender()
			if err != nil {
				t.Fatal(err)
			}
			stream := strings.Contains(f.Sidecar.Request.Body, `"stream":true`) || strings.Contains(f.Sidecar.Request.Body, `"stream": true`)
			var r record.Request
			s.Do(context.Background(), prepared(t, e, stream), &r)
			ss := f.Sidecar.StreamSummary

			if r.StatusCode != int32(f.Status) {
				t.Errorf("status %d, want %d", r.StatusCode, f.Status)
			}
			switch {
			case f.Status >= 400:
				if r.ErrorKind != record.ErrHTTPStatus {
					t.Errorf("error kind %q, want http_status", r.ErrorKind)
				}
				var body struct {
					Error struct{ Message string } `json:"error"`
				}
				json.Unmarshal(f.Body, &body)
				if body.Error.Message == "" || !strings.Contains(r.ErrorMessage, body.Error.Message[:min(40, len(body.Error.Message))]) {
					t.Errorf("message %q does not quote the server's %q", r.ErrorMessage, body.Error.Message)
				}
				return
			case ss == nil || !stream: // non-streaming 200
				var body struct {
					Choices []struct {
						Message struct{ Content, ReasoningContent string } `json:"message"`
						Text    string
						Finish  string `json:"finish_reason"`
					} `json:"choices"`
					Usage struct {
						Prompt     int `json:"prompt_tokens"`
						Completion int `json:"completion_tokens"`
					} `json:"usage"`
				}
				if err := json.Unmarshal(f.Body, &body); err != nil {
					t.Fatal(err)
				}
				if r.ErrorKind != record.ErrNone {
					t.Fatalf("error %s: %s", r.ErrorKind, r.ErrorMessage)
				}
				if r.Events != 1 || r.ContentEvents != 1 {
					t.Errorf("events %d content %d, want 1 1", r.Events, r.ContentEvents)
				}
				if r.FinishReason != body.Choices[0].Finish {
					t.Errorf("finish %q, want %q", r.FinishReason, body.Choices[0].Finish)
				}
				if r.ServerPromptTokens != int32(body.Usage.Prompt) || r.ServerCompletionTokens != int32(body.Usage.Completion) {
					t.Errorf("usage %d/%d, want %d/%d", r.ServerPromptTokens, r.ServerCompletionTokens, body.Usage.Prompt, body.Usage.Completion)
				}
				if r.TTFTNS != 0 || r.E2ENS <= 0 {
					t.Errorf("non-streaming TTFT %d E2E %d", r.TTFTNS, r.E2ENS)
				}
				return
			}
			// Streams.
			if int(r.Events) != ss.SSEEvents {
				t.Errorf("events %d, want %d", r.Events, ss.SSEEvents)
			}
			want := 0
			for _, c := range ss.PerChoice {
				want += c.Content + c.Reasoning + c.Text // text_deltas excludes the empty ones
			}
			if int(r.ContentEvents) != want {
				t.Errorf("content events %d, want %d", r.ContentEvents, want)
			}
			wantFinish := ""
			if fr, ok := ss.Finish["0"]; ok {
				wantFinish = fr.FinishReason
			}
			if r.FinishReason != wantFinish {
				t.Errorf("finish %q, want %q", r.FinishReason, wantFinish)
			}
			if n := len(ss.UsageEvents); n > 0 {
				u := ss.UsageEvents[n-1].Usage
				if r.ServerPromptTokens != int32(u.Prompt) || r.ServerCompletionTokens != int32(u.Completion) {
					t.Errorf("usage %d/%d, want %d/%d", r.ServerPromptTokens, r.ServerCompletionTokens, u.Prompt, u.Completion)
				}
				if u.Details != nil && r.ServerCachedTokens != int32(u.Details.Cached) {
					t.Errorf("cached %d, want %d", r.ServerCachedTokens, u.Details.Cached)
				}
			} else if r.ServerCompletionTokens != -1 {
				t.Errorf("usage %d reported, the stream has none", r.ServerCompletionTokens)
			}
			if len(ss.ErrorEvents) > 0 {
				if r.ErrorKind != record.ErrStreamError || !strings.Contains(r.ErrorMessage, "Failed to parse input") {
					t.Errorf("error %q %q, want stream_error", r.ErrorKind, r.ErrorMessage)
				}
			} else if r.ErrorKind != record.ErrNone {
				t.Errorf("error %s: %s", r.ErrorKind, r.ErrorMessage)
			}
			// Timeline invariants.
			if !(r.SentNS <= r.HeadersNS && r.HeadersNS <= r.FirstTokenNS && r.FirstTokenNS <= r.LastTokenNS && r.LastTokenNS <= r.EndNS) {
				t.Errorf("timeline not monotonic: sent %d headers %d first %d last %d end %d", r.SentNS, r.HeadersNS, r.FirstTokenNS, r.LastTokenNS, r.EndNS)
			}
			if r.TTFTNS <= 0 || r.E2ENS < r.TTFTNS {
				t.Errorf("TTFT %d E2E %d", r.TTFTNS, r.E2ENS)
			}
			reasoning := 0
			for _, c := range ss.PerChoice {
				reasoning += c.Reasoning
			}
			if reasoning > 0 && (r.TTFONS < r.TTFTNS || r.FirstOutputTokenNS == 0) {
				t.Errorf("reasoning stream: TTFO %d should not precede TTFT %d", r.TTFONS, r.TTFTNS)
			}
			evs := s.Events()
			if len(evs) != int(r.Events) {
				t.Fatalf("%d exported events, want %d", len(evs), r.Events)
			}
			kinds := map[record.EventKind]int{}
			for i, ev := range evs {
				kinds[ev.Kind]++
				if ev.Seq != int32(i) || ev.TimeNS < r.HeadersNS || ev.EventsInRead < 1 {
					t.Errorf("event %d: %+v", i, ev)
				}
			}
			if kinds[record.EventContent]+kinds[record.EventReasoning] != want {
				t.Errorf("event kinds %v: content+reasoning != %d", kinds, want)
			}
			if reasoning > 0 && kinds[record.EventReasoning] != reasoning {
				t.Errorf("reasoning events %d, want %d", kinds[record.EventReasoning], reasoning)
			}
		})
	}
}
